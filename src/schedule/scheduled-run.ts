/**
 * One scheduled run: every sheet waiting in scheduled/ goes through the same intake as the watched
 * inbox (claim by rename, read once into a snapshot and checked, submit, archive or reject), a few at
 * a time, then the run's summary is written to outbox/ (atomically) and logged. Whether each file is
 * complete is decided in one look at all of them: a file touched within the quiet period (still being
 * copied) waits for the next run.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import pLimit from "p-limit";
import { writeFileAtomicPatiently } from "../files/index.js";
import type { LogSink } from "../logging/index.js";
import {
  classifyFileName,
  DEFAULT_STABLE_MS,
  DEFAULT_WATCH_CONCURRENCY,
  lookAtFiles,
  type SheetIntake,
  type SheetIntakeOutcome,
} from "../watch/index.js";
import { type RunSummary, runSummaryFileName, summarizeRun } from "./run-summary.js";

export interface ScheduledRunOptions {
  intake: SheetIntake;
  /** The quiet period: a file untouched this long is complete. Default DEFAULT_STABLE_MS. */
  stableMs?: number;
  /** Sheets taken at once. Default DEFAULT_WATCH_CONCURRENCY. */
  concurrency?: number;
  logger?: LogSink;
  now?: () => Date;
}

export async function runScheduledSheets(
  options: ScheduledRunOptions,
): Promise<{ summary: RunSummary; summaryPath: string }> {
  const now = options.now ?? (() => new Date());
  const { intake } = options;
  const startedAt = now();
  const folder = intake.folders.scheduled;
  const names = (await readdir(folder)).filter((n) => classifyFileName(n).kind !== "ignore").sort();
  const looks = await lookAtFiles(folder, names, options.stableMs ?? DEFAULT_STABLE_MS);
  const stillWritten = names.filter((n) => looks.get(n)?.kind === "wait");
  if (stillWritten.length > 0)
    options.logger?.info({ files: stillWritten }, "touched within the quiet period: left for the next run");
  const limit = pLimit(options.concurrency ?? DEFAULT_WATCH_CONCURRENCY);
  const outcomes: SheetIntakeOutcome[] = await Promise.all(
    names.filter((n) => looks.get(n)?.kind === "stable").map((n) => limit(() => intake.take(folder, n))),
  );
  const summary = summarizeRun(outcomes, startedAt, now());
  const summaryPath = path.join(intake.folders.outbox, runSummaryFileName(startedAt));
  await writeFileAtomicPatiently(summaryPath, `${JSON.stringify(summary, null, 2)}\n`, {
    logger: options.logger,
  });
  options.logger?.info(
    {
      summaryPath,
      batches: summary.batches.map((b) => b.batchId),
      rows: summary.rows,
      totals: Object.fromEntries(Object.entries(summary.totals).map(([c, t]) => [c, t.amount])),
      rejected: summary.rejected.map((r) => r.file),
      deferred: summary.deferred.map((d) => d.file),
    },
    "scheduled run finished",
  );
  return { summary, summaryPath };
}
