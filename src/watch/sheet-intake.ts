/**
 * Taking one sheet from a folder and submitting it: the single code path behind the watched inbox
 * and the nightly run, so both behave exactly alike.
 *
 *   source/<name> ──rename──▶ processing/<claim>/<name> ──copy, hash──▶ processing/<claim>/.read/<name>
 *        ──unchanged?──▶ submitSheet(snapshot) ──▶ archive/<batchId>--<name>   (the snapshot)
 *                                            └──▶ rejected/<name> + report or note
 *
 * A batch's result file dropped back in (its header ends in the result columns) is an operator retry,
 * never a new batch: retryFromDroppedResultFile (src/retries/) retries its failed or corrected rows,
 * and the file goes to archive/ (rows retried) or rejected/ (none), its `.retry.txt` report beside it.
 *
 * Claiming files and holding their lease is `./claims.ts`; this module decides what becomes of a
 * claimed file. A claimed sheet is paid only as it was when it was read (`./read-snapshot.ts`): its
 * bytes are copied into a private snapshot while hashed, and the original is checked again after the
 * copy and after the sheet was read; a file that changed is refused (rejected/, with a note), and
 * everything after (validation, the archive, submission) reads only the snapshot, so the archive
 * holds exactly the bytes that were validated. An XLSX, or a CSV over {@link ISOLATED_READ_ABOVE_BYTES},
 * is read once in a worker thread with bounded memory and time (`readSheetIsolated`) before it is
 * read here: a file that breaks a reading limit, or that cannot be read at all, goes to rejected/ with
 * its note and is never retried, and whatever it holds can exhaust only that thread, never the
 * payments running in this process (a small CSV cannot: its reading is bounded by its size, and a
 * thread costs more than the reading). Only the file's own faults reject it; a
 * failure of the API, Redis or the disk leaves it in processing/ to be resumed when its lease runs out.
 */
import { lstat, rename, rm } from "node:fs/promises";
import path from "node:path";
import { SYSTEM_IDENTITIES } from "../approvals/index.js";
import { writeFileAtomicPatiently } from "../files/index.js";
import { inboxCaller, passGate, scheduleCaller } from "../gate/index.js";
import type { IntakeApi } from "../intake/index.js";
import type { LogSink } from "../logging/index.js";
import { openPipeline, type Pipeline, type PipelineSettings } from "../pipeline/index.js";
import type { ResultFileRetryOutcome } from "../retries/index.js";
import { readSheetIsolated, SheetReadAborted, SheetReadError } from "../sheets/index.js";
import { type CurrencyTotals, DuplicateFileError, type SubmitSheetOutcome } from "../submission/index.js";
import { type Claims, claimId, createClaims, isCode } from "./claims.js";
import { archivedSheetName, classifyFileName, errorNoteName, validationReportName } from "./file-rules.js";
import { type DataFolders, dataFolders, ensureFolders } from "./folders.js";
import {
  CHANGED_FILE_ADVICE,
  changeSince,
  type ReadSnapshot,
  snapshotPathOf,
  takeSnapshot,
} from "./read-snapshot.js";

/**
 * A CSV up to this size is read in this process only (its reading costs memory and time in proportion
 * to its few bytes, within the reading limits); a bigger one, and every XLSX (a few compressed bytes
 * can hold a great deal), is first read in a thread of its own.
 */
export const ISOLATED_READ_ABOVE_BYTES = 1024 * 1024;

function needsIsolatedRead(name: string, size: number): boolean {
  return path.extname(name).toLowerCase() !== ".csv" || size > ISOLATED_READ_ABOVE_BYTES;
}

/** A sheet untouched this long in processing/ is considered abandoned and is resumed. */
export const DEFAULT_LEASE_MS = 60_000;

export interface SheetIntakeOptions {
  api: IntakeApi;
  /** Where batches go; its `dataDir` (DATA_DIR) holds the folders sheets move through. */
  pipeline: PipelineSettings;
  entityId: string;
  logger?: LogSink;
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
      /** A result file: its corrected rows held for approval (nothing of them is paid until approved). */
      heldForApproval?: number;
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
  /**
   * Shutdown: ends the reading of the sheet in hand at once (its thread is terminated; the sheet stays
   * in processing/ and is resumed by the next start) and takes no more. Idempotent.
   */
  stop(): void;
  /** After `stop` and once no sheet is in hand: closes the intake's connections. Idempotent. */
  close(): Promise<void>;
}

export async function createSheetIntake(options: SheetIntakeOptions): Promise<SheetIntake> {
  const folders = dataFolders(options.pipeline.dataDir);
  await ensureFolders(folders);
  // One pipeline (connections, queue) for every sheet this intake submits.
  const pipeline = openPipeline(options.pipeline);
  const intake: Intake = {
    options: { ...options, pipeline: { ...options.pipeline, open: pipeline } },
    pipeline,
    folders,
    claims: createClaims(folders.processing, options.leaseMs ?? DEFAULT_LEASE_MS),
    log: options.logger,
    stopping: new AbortController(),
  };
  return {
    folders,
    take: (sourceDir, name) => take(intake, sourceDir, name),
    resumeAbandoned: () => resumeAbandoned(intake),
    stop: () => intake.stopping.abort(),
    close: async () => {
      intake.stopping.abort();
      await pipeline.close();
    },
  };
}

/** What every step of the intake works with. */
interface Intake {
  options: SheetIntakeOptions;
  /** The one open pipeline every sheet of this intake goes through. */
  pipeline: Pipeline;
  folders: DataFolders;
  claims: Claims;
  log: LogSink | undefined;
  /** Aborted by `stop()`: ends the sheet reading in hand. */
  stopping: AbortController;
}

async function take(intake: Intake, sourceDir: string, name: string): Promise<SheetIntakeOutcome> {
  const { claims, log } = intake;
  const verdict = classifyFileName(name);
  if (verdict.kind === "ignore") return { kind: "ignored", file: name, reason: verdict.reason };
  if (intake.stopping.signal.aborted) return { kind: "not-taken", file: name, reason: "shutting down" };
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
  // The rename is the lock, for a refused file too (a link itself moves, never its target).
  const claimed = await claims.claim(source, name);
  if (!claimed) {
    if (refusal === undefined) log?.info({ file: name }, "another watcher took this sheet");
    return { kind: "not-taken", file: name, reason: "another watcher took it" };
  }
  if (refusal !== undefined) return rejectAndRelease(intake, claimed, name, refusal);
  log?.info({ file: name, from: sourceDir }, "sheet taken for submission");
  const submittedBy =
    sourceDir === intake.folders.scheduled ? SYSTEM_IDENTITIES.schedule : SYSTEM_IDENTITIES.inbox;
  return submitClaimed(intake, claimed, name, false, submittedBy);
}

async function resumeAbandoned(intake: Intake): Promise<SheetIntakeOutcome[]> {
  const outcomes: SheetIntakeOutcome[] = [];
  for (const abandoned of await intake.claims.abandoned()) {
    if (intake.stopping.signal.aborted) break;
    const claimed = await intake.claims.reclaim(abandoned);
    if (!claimed) continue; // another resumer got it
    const verdict = classifyFileName(abandoned.name);
    if (verdict.kind !== "sheet") {
      outcomes.push(await rejectAndRelease(intake, claimed, abandoned.name, verdict.reason));
      continue;
    }
    intake.log?.info({ file: abandoned.name }, "resuming a sheet left in processing/");
    outcomes.push(await submitClaimed(intake, claimed, abandoned.name, true));
  }
  return outcomes;
}

/**
 * The file in hand: the claimed original, and once it was read, its snapshot (what was validated and
 * is placed in archive/ or rejected/; the original is then removed, or set aside if it changed).
 */
interface Held {
  claimed: string;
  name: string;
  snapshot?: ReadSnapshot;
}

/**
 * Moves the file in hand to `dir` under `targetName` (never overwriting): the snapshot when there is
 * one, and then the original goes, unless it changed since it was read. A change that late (after the
 * sheet was validated, and possibly submitted) cannot be refused any more: the original is set aside
 * in rejected/ with a note saying so, and the error is logged. Returns where the file went.
 */
async function place(intake: Intake, held: Held, dir: string, targetName: string): Promise<string> {
  if (!held.snapshot) return intake.claims.moveTo(dir, held.claimed, targetName);
  const placedAs = await intake.claims.moveTo(dir, held.snapshot.path, targetName);
  const change = await changeSince(held.claimed, held.snapshot);
  if (change === undefined) {
    await rm(held.claimed, { force: true });
    await intake.claims.release(held.claimed);
    return placedAs;
  }
  const setAside = await intake.claims.moveTo(intake.folders.rejected, held.claimed, held.name);
  await writeNote(
    intake,
    setAside,
    `${held.name} changed after it was read: ${change}. What was read is what counts: it is ` +
      `${placedAs}. This copy, as it is now, was not submitted: compare the two, and if this one is ` +
      "what should be paid, drop it into the folder again.",
  );
  intake.log?.error(
    { file: held.name, placedAs, setAside, change },
    "sheet changed after it was read; the changed file was set aside in rejected/",
  );
  return placedAs;
}

/**
 * Writes `<file>.error.txt` beside a file in rejected/: the only place that tells the person who
 * dropped it why, so a failed write (a full disk) is tried again, and its text logged if it never is.
 */
async function writeNote(intake: Intake, file: string, text: string): Promise<string> {
  const notePath = path.join(path.dirname(file), errorNoteName(path.basename(file)));
  await writeFileAtomicPatiently(notePath, `${text}\n`, { logger: intake.log });
  return notePath;
}

/** Moves the file in hand to rejected/ with its `.error.txt` note saying why. */
async function reject(
  intake: Intake,
  held: Held,
  reason: string,
  extra: { duplicateOf?: string } = {},
): Promise<SheetIntakeOutcome> {
  const { name } = held;
  const rejectedAs = await place(intake, held, intake.folders.rejected, name);
  const notePath = await writeNote(intake, rejectedAs, `${name} was not submitted: ${reason}`);
  intake.log?.warn({ file: name, rejectedAs, reason, ...extra }, "sheet rejected");
  return { kind: "rejected", file: name, reason, rejectedAs, notePath, ...extra };
}

async function rejectAndRelease(
  intake: Intake,
  claimed: string,
  name: string,
  reason: string,
): Promise<SheetIntakeOutcome> {
  try {
    return await reject(intake, { claimed, name }, reason);
  } finally {
    await intake.claims.release(claimed);
  }
}

/**
 * A sheet that changed while it was read is refused: the original, as it is now, goes to rejected/
 * with a note that says what happened and what to do; nothing from it was recorded or paid.
 */
async function refuseChanged(intake: Intake, held: Held, change: string): Promise<SheetIntakeOutcome> {
  const { name } = held;
  const reason = `it changed while it was being read: ${change}`;
  const rejectedAs = await intake.claims.moveTo(intake.folders.rejected, held.claimed, name);
  const notePath = await writeNote(
    intake,
    rejectedAs,
    `${name} was not submitted: ${reason}. ${CHANGED_FILE_ADVICE}`,
  );
  intake.log?.error({ file: name, rejectedAs, change }, "sheet changed while it was being read; refused");
  return { kind: "rejected", file: name, reason, rejectedAs, notePath };
}

/**
 * Handles a claimed sheet while holding its lease. First it is read once: its bytes copied into a
 * private snapshot while hashed, and the original checked again after the copy and after the sheet
 * was read in a thread (a file that cannot or must not be read is rejected there); one that changed
 * meanwhile is refused. Then, from the snapshot only, it is treated as a dropped result file (an
 * operator retry) or submitted. `resumed`: it was found in processing/ after a crash. `submittedBy`:
 * the inbox or the nightly run (a resumed sheet counts as the inbox's).
 */
async function submitClaimed(
  intake: Intake,
  claimed: string,
  name: string,
  resumed: boolean,
  submittedBy: string = SYSTEM_IDENTITIES.inbox,
): Promise<SheetIntakeOutcome> {
  const { options, folders } = intake;
  const releaseLease = intake.claims.holdLease(claimed);
  // The report is written straight into rejected/ under a hidden name and renamed beside the sheet
  // once the sheet's own name there is known (never into processing/, where it would look like a sheet).
  const pendingReport = path.join(folders.rejected, `.${claimId()}.${validationReportName(name)}`);
  const held: Held = { claimed, name };
  try {
    const snapshot = await takeSnapshot(claimed);
    const changedOnCopy = await changeSince(claimed, snapshot);
    if (changedOnCopy !== undefined) return await refuseChanged(intake, held, changedOnCopy);
    held.snapshot = snapshot;
    if (needsIsolatedRead(name, snapshot.size))
      await readSheetIsolated(snapshot.path, { signal: intake.stopping.signal });
    // Last look before anything is recorded: the sheet was read from the snapshot, and the original
    // must still be exactly what was read.
    const changedOnRead = await changeSince(claimed, snapshot);
    if (changedOnRead !== undefined) {
      delete held.snapshot;
      return await refuseChanged(intake, held, changedOnRead);
    }
    // Through the one gate (src/gate): approvals and the audit trail, as the inbox or the nightly run.
    const gate = {
      ...(submittedBy === SYSTEM_IDENTITIES.schedule ? scheduleCaller() : inboxCaller()),
      pipeline: intake.pipeline,
    };
    const retry = await passGate(gate, {
      kind: "result-file",
      file: { filePath: snapshot.path, fileName: name, api: options.api },
    });
    if (retry) return await settleResultFileRetry(intake, held, retry);
    const outcome = await passGate(gate, {
      kind: "submit",
      sheet: {
        sheetPath: snapshot.path,
        api: options.api,
        pipeline: options.pipeline,
        entityId: options.entityId,
        onInvalid: "reject",
        reportPath: pendingReport,
      },
    });
    return await settleSubmission(intake, held, outcome);
  } catch (err) {
    return await settleFailure(intake, held, resumed, err);
  } finally {
    releaseLease();
    await rm(pendingReport, { force: true });
    // A snapshot not placed (the sheet refused, or left for a retry, which reads it afresh) goes.
    await rm(path.dirname(snapshotPathOf(claimed)), { recursive: true, force: true });
    await intake.claims.release(claimed);
  }
}

/** Where a sheet goes when reading or submitting it failed: rejected/, archive/ or (not its fault) stays. */
async function settleFailure(
  intake: Intake,
  held: Held,
  resumed: boolean,
  err: unknown,
): Promise<SheetIntakeOutcome> {
  const { folders, log } = intake;
  const { claimed, name } = held;
  if (err instanceof DuplicateFileError) {
    if (resumed) {
      // Our own earlier run submitted it and crashed before archiving: it is accepted already.
      const archivedAs = await place(
        intake,
        held,
        folders.archive,
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
      intake,
      held,
      `this file's content was already submitted as batch ${err.existingBatchId}; no second batch was started ` +
        "(see `payouts status " +
        `${err.existingBatchId}\`; to pay the same rows again on purpose use \`payouts submit --allow-duplicate-file\`)`,
      { duplicateOf: err.existingBatchId },
    );
  }
  if (err instanceof SheetReadError) {
    return await reject(intake, held, `the sheet cannot be read (${err.code}): ${err.message}`);
  }
  const reason = err instanceof Error ? err.message : String(err);
  if (err instanceof SheetReadAborted) {
    log?.info({ file: name, claimed }, "stopped while reading this sheet; it stays in processing/");
    return { kind: "deferred", file: name, reason };
  }
  // Not the sheet's fault (API, Redis, disk): keep it in processing/; when the lease runs out a
  // rescan reads and submits it again, which is safe (same content resumes or is a known duplicate).
  log?.error(
    { file: name, claimed, err: reason },
    "sheet not submitted; it stays in processing/ for a retry",
  );
  return { kind: "deferred", file: name, reason };
}

/** A submitted sheet goes to archive/; an invalid one to rejected/ with its validation report. */
async function settleSubmission(
  intake: Intake,
  held: Held,
  outcome: SubmitSheetOutcome,
): Promise<SheetIntakeOutcome> {
  const { folders, log } = intake;
  const { name } = held;
  switch (outcome.kind) {
    case "submitted": {
      const archivedAs = await place(intake, held, folders.archive, archivedSheetName(outcome.batchId, name));
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
          ? `${outcome.summary.invalidRows} of ${outcome.summary.rows} rows are invalid; nothing was submitted${heldDuplicates(outcome.summary)}`
          : "the sheet has no rows to pay";
      if (outcome.reportPath === undefined) return await reject(intake, held, reason);
      const rejectedAs = await place(intake, held, folders.rejected, name);
      const notePath = path.join(folders.rejected, validationReportName(path.basename(rejectedAs)));
      await rename(outcome.reportPath, notePath);
      log?.warn({ file: name, rejectedAs, report: notePath, reason }, "sheet rejected");
      return { kind: "rejected", file: name, reason, rejectedAs, notePath };
    }
    case "dry-run":
      throw new Error("unreachable: the intake never asks for a dry run");
  }
}

/** A result file dropped back in: archive/ when rows were retried, else rejected/; its report beside it. */
async function settleResultFileRetry(
  intake: Intake,
  held: Held,
  retry: ResultFileRetryOutcome,
): Promise<SheetIntakeOutcome> {
  const { folders, log } = intake;
  const { name } = held;
  if ((retry.retried === 0 && retry.held === 0) || retry.batchId === undefined) {
    const rejectedAs = await place(intake, held, folders.rejected, name);
    const notePath = `${rejectedAs}.retry.txt`;
    await writeFileAtomicPatiently(notePath, retry.report, { logger: log });
    const reason = retry.refusal ?? "no row of this result file could be retried (see the report)";
    log?.warn({ file: name, batchId: retry.batchId, rejectedAs, reason }, "result file: nothing retried");
    return { kind: "rejected", file: name, reason, rejectedAs, notePath };
  }
  const archivedAs = await place(intake, held, folders.archive, archivedSheetName(retry.batchId, name));
  const retryReport = `${archivedAs}.retry.txt`;
  await writeFileAtomicPatiently(retryReport, retry.report, { logger: log });
  log?.info(
    {
      file: name,
      batchId: retry.batchId,
      retried: retry.retried,
      held: retry.held,
      archivedAs,
      report: retryReport,
    },
    retry.held > 0 ? "result file: rows retried or held for approval" : "result file: rows retried",
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
    ...(retry.held > 0 ? { heldForApproval: retry.held } : {}),
  };
}

/**
 * A folder has nobody to confirm possible duplicates (docs/design.md §3.13): the note says how a
 * person does.
 */
function heldDuplicates(summary: { countsByCode: ReadonlyMap<string, number> }): string {
  const count = summary.countsByCode.get("POSSIBLE_DUPLICATE") ?? 0;
  return count === 0
    ? ""
    : ` (${count} possible duplicate(s), named in the report: if they are meant to be paid, submit the sheet with \`payouts submit --allow-possible-duplicates\` or the console's "pay possible duplicates" box)`;
}
