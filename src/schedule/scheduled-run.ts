/**
 * One scheduled run: every sheet waiting in scheduled/ goes through the same intake as the watched
 * inbox (claim by rename, submit, archive or reject), then the run's summary is written to outbox/
 * (atomically) and logged. Files still being copied at that moment wait for the next run.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { writeFileAtomic } from "../files/index.js";
import {
  classifyFileName,
  DEFAULT_STABLE_MS,
  type IntakeLogger,
  type SheetIntake,
  type SheetIntakeOutcome,
  waitUntilStable,
} from "../watch/index.js";
import { type RunSummary, runSummaryFileName, summarizeRun } from "./run-summary.js";

export interface ScheduledRunOptions {
  intake: SheetIntake;
  /** Time between the two size checks that decide a file is complete. Default 1000 ms. */
  stableMs?: number;
  logger?: IntakeLogger;
  now?: () => Date;
}

export async function runScheduledSheets(
  options: ScheduledRunOptions,
): Promise<{ summary: RunSummary; summaryPath: string }> {
  const now = options.now ?? (() => new Date());
  const { intake } = options;
  const startedAt = now();
  const folder = intake.folders.scheduled;
  const outcomes: SheetIntakeOutcome[] = [];
  const names = (await readdir(folder)).filter((n) => classifyFileName(n).kind !== "ignore").sort();
  for (const name of names) {
    const stability = await waitUntilStable(path.join(folder, name), options.stableMs ?? DEFAULT_STABLE_MS);
    if (stability !== "stable") continue;
    outcomes.push(await intake.take(folder, name));
  }
  const summary = summarizeRun(outcomes, startedAt, now());
  const summaryPath = path.join(intake.folders.outbox, runSummaryFileName(startedAt));
  await writeFileAtomic(summaryPath, `${JSON.stringify(summary, null, 2)}\n`);
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
