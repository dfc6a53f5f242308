/**
 * Taking one sheet from a folder and submitting it: the single code path behind the watched inbox
 * and the nightly run, so both behave exactly alike.
 *
 *   source/<name> ──rename──▶ processing/<claim>/<name> ──submitSheet──▶ archive/<batchId>--<name>
 *                                                                   └──▶ rejected/<name> + report or note
 *
 * A batch's result file dropped back in (its header ends in the result columns) is an operator retry,
 * never a new batch: retryFromDroppedResultFile (src/retries/) retries its failed or corrected rows,
 * and the file goes to archive/ (rows retried) or rejected/ (none), its `.retry.txt` report beside it.
 *
 * The rename into processing/ is the lock: when two watchers go for the same file only one rename
 * succeeds, the other sees ENOENT and moves on. Each claim gets its own sub-folder, so the sheet keeps
 * its own name (the batch's source name) and two sheets of the same name never overwrite each other.
 * While a sheet is being handled its modification time is refreshed (a lease): a sheet in
 * processing/ whose lease expired was left by a crash (or a transient failure) and is resumed, again
 * by a rename, so two resumers never handle it twice. Every path out of processing/ is a rename.
 */
import { randomBytes } from "node:crypto";
import { lstat, lutimes, mkdir, readdir, rename, rm, rmdir } from "node:fs/promises";
import path from "node:path";
import { SYSTEM_IDENTITIES } from "../approvals/index.js";
import { writeFileAtomic } from "../files/index.js";
import type { IntakeApi } from "../intake/index.js";
import type { PipelineSettings } from "../pipeline/index.js";
import { type ResultFileRetryOutcome, retryFromDroppedResultFile } from "../retries/index.js";
import { SheetReadError } from "../sheets/index.js";
import {
  type CurrencyTotals,
  DuplicateFileError,
  type SubmitSheetOutcome,
  submitSheet,
} from "../submission/index.js";
import {
  archivedSheetName,
  classifyFileName,
  errorNoteName,
  numberedName,
  validationReportName,
} from "./file-rules.js";
import { type DataFolders, dataFolders, ensureFolders } from "./folders.js";

/** A sheet untouched this long in processing/ is considered abandoned and is resumed. */
export const DEFAULT_LEASE_MS = 60_000;

/** The subset of a pino logger the intake writes to. */
export interface IntakeLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface SheetIntakeOptions {
  /** DATA_DIR. */
  dataDir: string;
  api: IntakeApi;
  pipeline: PipelineSettings;
  entityId: string;
  logger?: IntakeLogger;
  /** See {@link DEFAULT_LEASE_MS}. The lease is refreshed every third of it. */
  leaseMs?: number;
}

/** What became of one file. `file` is the name it had in its folder. */
export type SheetIntakeOutcome =
  | { kind: "ignored"; file: string; reason: string }
  /** Another watcher took it first, it vanished, or it is still being handled elsewhere. */
  | { kind: "not-taken"; file: string; reason: string }
  | {
      kind: "accepted";
      file: string;
      batchId: string;
      /** An interrupted submission of the same content was finished instead of a new batch. */
      resumed: boolean;
      /** Found in processing/ after a crash, its batch already complete: nothing was submitted again. */
      alreadyAccepted: boolean;
      /** Valid rows (0 when already accepted: the batch was counted when it was first submitted). */
      rows: number;
      totals: CurrencyTotals;
      archivedAs: string;
      /** A result file dropped back in (an operator retry; `rows` are the rows retried): its report. */
      retryReport?: string;
    }
  | {
      kind: "rejected";
      file: string;
      reason: string;
      rejectedAs: string;
      /** The validation report or the `.error.txt` note beside it. */
      notePath: string;
      /** For a duplicate: the batch that already holds this content. */
      duplicateOf?: string;
    }
  /** A transient failure (API or Redis unreachable): the sheet stays in processing/ and is retried. */
  | { kind: "deferred"; file: string; reason: string };

export interface SheetIntake {
  folders: DataFolders;
  /** Takes `name` from `sourceDir` (inbox/ or scheduled/) and submits it. */
  take(sourceDir: string, name: string): Promise<SheetIntakeOutcome>;
  /** Resumes sheets left in processing/ whose lease expired (a crash, a transient failure). */
  resumeAbandoned(): Promise<SheetIntakeOutcome[]>;
}

export async function createSheetIntake(options: SheetIntakeOptions): Promise<SheetIntake> {
  const folders = dataFolders(options.dataDir);
  await ensureFolders(folders);
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const log = options.logger;

  /** Renames `source` into a fresh claim folder; undefined when someone else got it first. */
  async function claim(source: string, name: string): Promise<string | undefined> {
    const claimDir = path.join(folders.processing, claimId());
    await mkdir(claimDir);
    const claimed = path.join(claimDir, name);
    try {
      await rename(source, claimed);
    } catch (err) {
      await rmdir(claimDir).catch(() => undefined);
      if (isCode(err, "ENOENT")) return undefined;
      throw err;
    }
    await touch(claimed);
    return claimed;
  }

  /** Moves a file out of processing/ (or a refused file out of its folder) without overwriting. */
  async function moveTo(dir: string, from: string, name: string): Promise<string> {
    const target = await freeName(dir, name);
    await rename(from, target);
    return target;
  }

  async function writeNote(forFile: string, text: string): Promise<string> {
    const notePath = path.join(path.dirname(forFile), errorNoteName(path.basename(forFile)));
    await writeFileAtomic(notePath, `${text}\n`);
    return notePath;
  }

  async function reject(
    from: string,
    name: string,
    reason: string,
    extra: { duplicateOf?: string } = {},
  ): Promise<SheetIntakeOutcome> {
    const rejectedAs = await moveTo(folders.rejected, from, name);
    const notePath = await writeNote(rejectedAs, `${name} was not submitted: ${reason}`);
    log?.warn({ file: name, rejectedAs, reason, ...extra }, "sheet rejected");
    return { kind: "rejected", file: name, reason, rejectedAs, notePath, ...extra };
  }

  /** A result file dropped back in: archive/ when rows were retried, else rejected/; its report beside it. */
  async function settleResultFileRetry(
    claimed: string,
    name: string,
    retry: ResultFileRetryOutcome,
  ): Promise<SheetIntakeOutcome> {
    if (retry.retried === 0 || retry.batchId === undefined) {
      const rejectedAs = await moveTo(folders.rejected, claimed, name);
      const notePath = `${rejectedAs}.retry.txt`;
      await writeFileAtomic(notePath, retry.report);
      const reason = retry.refusal ?? "no row of this result file could be retried (see the report)";
      log?.warn({ file: name, batchId: retry.batchId, rejectedAs, reason }, "result file: nothing retried");
      return { kind: "rejected", file: name, reason, rejectedAs, notePath };
    }
    const archivedAs = await moveTo(folders.archive, claimed, archivedSheetName(retry.batchId, name));
    const retryReport = `${archivedAs}.retry.txt`;
    await writeFileAtomic(retryReport, retry.report);
    log?.info(
      { file: name, batchId: retry.batchId, retried: retry.retried, archivedAs, report: retryReport },
      "result file: rows retried",
    );
    return {
      kind: "accepted",
      file: name,
      batchId: retry.batchId,
      resumed: false,
      alreadyAccepted: false,
      rows: retry.retried,
      totals: retry.totals,
      archivedAs,
      retryReport,
    };
  }

  /**
   * Submits a claimed sheet and moves it on. `resumed`: it was found in processing/ after a crash.
   * `submittedBy`: the inbox or the nightly run (a resumed sheet counts as the inbox's).
   */
  async function submitClaimed(
    claimed: string,
    name: string,
    resumed: boolean,
    submittedBy: string = SYSTEM_IDENTITIES.inbox,
  ): Promise<SheetIntakeOutcome> {
    const heartbeat = setInterval(() => void touch(claimed), Math.max(10, Math.floor(leaseMs / 3)));
    heartbeat.unref();
    // The report is written straight into rejected/ under a hidden name and renamed beside the sheet
    // once the sheet's own name there is known (never into processing/, where it would look like a sheet).
    const pendingReport = path.join(folders.rejected, `.${claimId()}.${validationReportName(name)}`);
    try {
      let outcome: SubmitSheetOutcome;
      try {
        const retry = await retryFromDroppedResultFile({
          filePath: claimed,
          fileName: name,
          api: options.api,
          pipeline: options.pipeline,
        });
        if (retry) return await settleResultFileRetry(claimed, name, retry);
        outcome = await submitSheet({
          sheetPath: claimed,
          api: options.api,
          pipeline: options.pipeline,
          dataDir: options.dataDir,
          entityId: options.entityId,
          onInvalid: "reject",
          reportPath: pendingReport,
          submittedBy,
        });
      } catch (err) {
        if (err instanceof DuplicateFileError) {
          if (resumed) {
            // Our own earlier run submitted it and crashed before archiving: it is accepted already.
            const archivedAs = await moveTo(
              folders.archive,
              claimed,
              archivedSheetName(err.existingBatchId, name),
            );
            log?.info(
              { file: name, batchId: err.existingBatchId, archivedAs },
              "sheet found in processing/ was already accepted; archived",
            );
            return {
              kind: "accepted",
              file: name,
              batchId: err.existingBatchId,
              resumed: false,
              alreadyAccepted: true,
              rows: 0,
              totals: {},
              archivedAs,
            };
          }
          return await reject(
            claimed,
            name,
            `this file's content was already submitted as batch ${err.existingBatchId}; no second batch was started ` +
              "(see `payouts status " +
              `${err.existingBatchId}\`; to pay the same rows again on purpose use \`payouts submit --allow-duplicate-file\`)`,
            { duplicateOf: err.existingBatchId },
          );
        }
        if (err instanceof SheetReadError) {
          return await reject(claimed, name, `the sheet cannot be read (${err.code}): ${err.message}`);
        }
        // Not the sheet's fault (API, Redis, disk): keep it in processing/; when the lease runs out a
        // rescan submits it again, which is safe (same content resumes or is a known duplicate).
        const reason = err instanceof Error ? err.message : String(err);
        log?.error(
          { file: name, claimed, err: reason },
          "sheet not submitted; it stays in processing/ for a retry",
        );
        return { kind: "deferred", file: name, reason };
      }
      switch (outcome.kind) {
        case "submitted": {
          const archivedAs = await moveTo(folders.archive, claimed, archivedSheetName(outcome.batchId, name));
          log?.info(
            {
              file: name,
              batchId: outcome.batchId,
              resumed: outcome.resumed,
              rows: outcome.summary.validRows,
              enqueued: outcome.enqueued,
              archivedAs,
            },
            outcome.resumed ? "finished the interrupted submission of this sheet" : "sheet accepted",
          );
          return {
            kind: "accepted",
            file: name,
            batchId: outcome.batchId,
            resumed: outcome.resumed,
            alreadyAccepted: false,
            rows: outcome.summary.validRows,
            totals: outcome.totals,
            archivedAs,
          };
        }
        case "invalid":
        case "nothing-to-pay": {
          const reason =
            outcome.kind === "invalid"
              ? `${outcome.summary.invalidRows} of ${outcome.summary.rows} rows are invalid; nothing was submitted`
              : "the sheet has no rows to pay";
          if (outcome.reportPath === undefined) return await reject(claimed, name, reason);
          const rejectedAs = await moveTo(folders.rejected, claimed, name);
          const notePath = path.join(folders.rejected, validationReportName(path.basename(rejectedAs)));
          await rename(outcome.reportPath, notePath);
          log?.warn({ file: name, rejectedAs, report: notePath, reason }, "sheet rejected");
          return { kind: "rejected", file: name, reason, rejectedAs, notePath };
        }
        case "dry-run":
          throw new Error("unreachable: the intake never asks for a dry run");
      }
    } finally {
      clearInterval(heartbeat);
      await rm(pendingReport, { force: true });
      await rmdir(path.dirname(claimed)).catch(() => undefined);
    }
  }

  async function take(sourceDir: string, name: string): Promise<SheetIntakeOutcome> {
    const verdict = classifyFileName(name);
    if (verdict.kind === "ignore") return { kind: "ignored", file: name, reason: verdict.reason };
    const source = path.join(sourceDir, name);
    let stat: Awaited<ReturnType<typeof lstat>>;
    try {
      stat = await lstat(source);
    } catch (err) {
      if (isCode(err, "ENOENT")) return { kind: "not-taken", file: name, reason: "it is gone" };
      throw err;
    }
    if (stat.isDirectory()) return { kind: "ignored", file: name, reason: "a folder" };
    const refusal = stat.isSymbolicLink()
      ? "symbolic links are refused: copy the sheet itself into the folder"
      : !stat.isFile()
        ? "not a regular file"
        : verdict.kind === "refuse"
          ? verdict.reason
          : undefined;
    if (refusal !== undefined) {
      // The rename is the lock here too (the link itself moves, never its target).
      const claimed = await claim(source, name);
      if (!claimed) return { kind: "not-taken", file: name, reason: "another watcher took it" };
      try {
        return await reject(claimed, name, refusal);
      } finally {
        await rmdir(path.dirname(claimed)).catch(() => undefined);
      }
    }
    const claimed = await claim(source, name);
    if (!claimed) {
      log?.info({ file: name }, "another watcher took this sheet");
      return { kind: "not-taken", file: name, reason: "another watcher took it" };
    }
    log?.info({ file: name, from: sourceDir }, "sheet taken for submission");
    const submittedBy =
      sourceDir === folders.scheduled ? SYSTEM_IDENTITIES.schedule : SYSTEM_IDENTITIES.inbox;
    return submitClaimed(claimed, name, false, submittedBy);
  }

  async function resumeAbandoned(): Promise<SheetIntakeOutcome[]> {
    const outcomes: SheetIntakeOutcome[] = [];
    const now = Date.now();
    for (const entry of await readdir(folders.processing, { withFileTypes: true })) {
      const entryPath = path.join(folders.processing, entry.name);
      // A sheet put straight into processing/ (by hand, or by an older version) counts as abandoned.
      const candidates: { file: string; name: string }[] = [];
      if (entry.isDirectory()) {
        for (const inner of await readdir(entryPath).catch(() => [] as string[])) {
          candidates.push({ file: path.join(entryPath, inner), name: inner });
        }
        if (candidates.length === 0 && (await olderThan(entryPath, now - leaseMs))) {
          await rmdir(entryPath).catch(() => undefined); // a crash between moving out and tidying up
        }
      } else if (!entry.name.startsWith(".")) {
        candidates.push({ file: entryPath, name: entry.name });
      }
      for (const c of candidates) {
        if (!(await olderThan(c.file, now - leaseMs))) continue; // its owner is alive and working
        const verdict = classifyFileName(c.name);
        const claimed = await claim(c.file, c.name);
        if (!claimed) continue; // another resumer got it
        if (entry.isDirectory()) await rmdir(entryPath).catch(() => undefined);
        if (verdict.kind !== "sheet") {
          try {
            outcomes.push(await reject(claimed, c.name, verdict.reason));
          } finally {
            await rmdir(path.dirname(claimed)).catch(() => undefined);
          }
          continue;
        }
        log?.info({ file: c.name }, "resuming a sheet left in processing/");
        outcomes.push(await submitClaimed(claimed, c.name, true));
      }
    }
    return outcomes;
  }

  return { folders, take, resumeAbandoned };
}

/** `dir/name`, or `dir/<base>.2<ext>`... when that is taken: a move never overwrites a file. */
async function freeName(dir: string, name: string): Promise<string> {
  for (let n = 1; ; n++) {
    const candidate = path.join(dir, numberedName(name, n));
    try {
      await lstat(candidate);
    } catch (err) {
      if (isCode(err, "ENOENT")) return candidate;
      throw err;
    }
  }
}

function claimId(): string {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "");
  return `${stamp}-${randomBytes(4).toString("hex")}`;
}

async function touch(file: string): Promise<void> {
  const now = new Date();
  await lutimes(file, now, now).catch(() => undefined);
}

async function olderThan(file: string, cutoffMs: number): Promise<boolean> {
  try {
    return (await lstat(file)).mtimeMs < cutoffMs;
  } catch {
    return false;
  }
}

function isCode(err: unknown, code: string): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === code;
}
