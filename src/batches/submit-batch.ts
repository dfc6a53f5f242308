/**
 * Submitting a batch, resumably (docs/design.md §3.1, resumable submission):
 *
 *   1. check the file was not accepted before: in Redis, and in the archive on disk (which outlives a
 *      loss of Redis);
 *   2. archive the instructions (the intent) on disk;
 *   3. claim the file's sha256 in Redis, then on disk, ask the approval gate whether the batch must
 *      wait, and record the batch (incomplete);
 *   4. unless the batch waits for approval (then its rows are fed when it is approved: src/approvals),
 *      give it a feed (batch-feeder.ts): its rows go to the queue a window at a time, one job per
 *      `queued` row (job id = the row's Idempotency-Key), from now on while they are being recorded;
 *   5. record every row (`queued`, attempt 1) in chunks, read back from the archive, topping the feed
 *      up after each chunk;
 *   6. mark the batch `enqueueComplete`: its rows are recorded and its feed (the workers' from now on)
 *      hands them all to the queue.
 *
 * Rows stream through every step (the caller's rows into the archive, the archive into Redis, a
 * window of them into the queue), so a batch of a million rows costs the memory of a few chunks.
 *
 * A crash anywhere leaves a batch that {@link resumeBatch} finishes from its archived intent (never
 * from a new reading of the file), when the same file comes again or a worker starts: re-recording
 * skips rows that exist, the feed carries on from its cursor (re-adding a job id that exists is a
 * no-op in BullMQ), and rows already past `queued` are never enqueued again. Never a second batch.
 */
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { PayoutsError } from "../errors/index.js";
import { fileKeyFor } from "../row-identity/index.js";
import { BatchFeeder, FEED_LOCK_WAIT_MS, queuedRowCount, type RowEnqueuer } from "./batch-feeder.js";
import type { BatchStore } from "./batch-store.js";
import { ROW_CHUNK } from "./batch-store.js";
import {
  archivedBatchForFile,
  archiveEntries,
  archivePathFor,
  archiveStagedRows,
  type RowSource,
  recordArchivedFile,
  type StagedRows,
  writeInstructionArchive,
} from "./instruction-archive.js";
import type { BatchRecord, InvalidRowInput, SheetLayout, SubmittedInstruction } from "./types.js";

export { enqueueQueuedRows, type RowEnqueuer, type RowJobRequest } from "./batch-feeder.js";

/**
 * The approval gate (docs/design.md §3.10, implemented in src/approvals). Every way a batch comes in goes
 * through submitBatch, so this is the one place a batch can be held: `hold` is asked once per new
 * batch, before its record exists (a crash can never leave a held batch without its hold), and
 * `mayEnqueue` before any row of an existing batch is handed to the queue.
 */
export interface SubmissionGate {
  /** True: the batch waits for approval (the gate recorded that); no row of it may be queued until released. */
  hold(request: {
    batchId: string;
    submittedBy: string;
    requestedAt: Date;
    /** Minor units per currency of the valid rows. */
    totals: Record<string, number>;
  }): Promise<boolean>;
  /** False while the batch awaits approval and after it was rejected or expired. */
  mayEnqueue(batchId: string): Promise<boolean>;
}

export class DuplicateFileError extends PayoutsError {
  override readonly name = "DuplicateFileError";
  /**
   * @param lostFromRedis the archive on disk knows the batch but Redis does not (Redis lost it, or
   *   its submission was cut before the batch was recorded): `payouts recover` rebuilds it.
   */
  constructor(
    readonly existingBatchId: string,
    readonly lostFromRedis = false,
  ) {
    super(
      "DUPLICATE_FILE",
      lostFromRedis
        ? `this file was already submitted as batch ${existingBatchId} (its archive says so, but Redis no longer has it: ` +
            `run \`payouts recover ${existingBatchId}\` to rebuild it from the archive and the ledger; nothing is paid twice)`
        : `this file was already submitted as batch ${existingBatchId}; submit it again only with --allow-duplicate-file`,
      { kind: "conflict" },
    );
  }
}

export interface SubmitBatchOptions {
  store: BatchStore;
  enqueuer: RowEnqueuer;
  /** The valid rows, in sheet order (read once, as a stream); or give `staged`. */
  instructions?: RowSource<SubmittedInstruction>;
  /** Rows that failed validation (recorded as `invalid` for the result file; never enqueued). Read once. */
  invalidRows?: RowSource<InvalidRowInput>;
  /**
   * The rows (valid and invalid) already staged in the archive's line format, as `payouts submit`
   * stages them while it validates a sheet: copied into the archive as they are. Instead of
   * `instructions` and `invalidRows`.
   */
  staged?: StagedRows;
  /** sha256 (hex) of the submitted file. */
  fileSha256: string;
  sourceName: string;
  /** `ent_...` or `me`. */
  entityId: string;
  /** DATA_DIR: the instructions are archived under `<dataDir>/archive/`. */
  dataDir: string;
  /** Accept a file whose content was submitted before (a new batch). Default false: DUPLICATE_FILE. */
  allowDuplicateFile?: boolean;
  /** The sheet's columns and format (for the result file); default: no columns, CSV. */
  sheet?: SheetLayout;
  /** Fixed batch id (tests); default a new one. */
  batchId?: string;
  now?: () => Date;
  /** Who submits: a user or token name, or a system identity (`cli:<os user>`, `system:inbox`). */
  submittedBy?: string;
  /** The approval gate; without one nothing is held (src/pipeline always passes one). */
  gate?: SubmissionGate;
}

export interface SubmitBatchResult {
  batchId: string;
  /** True when an earlier interrupted submission of the same file was finished instead. */
  resumed: boolean;
  rowCount: number;
  invalidCount: number;
  /**
   * Rows queued for payment by this call (handed to the batch's feed, which hands them to the queue a
   * window at a time).
   */
  enqueued: number;
  /** The batch waits for approval: its rows are recorded but not queued. */
  awaitingApproval?: boolean;
}

/** The shape of a {@link newBatchId}, as regular-expression source: what a renamed result file is searched for. */
export const GENERATED_BATCH_ID_SOURCE = "b\\d{8}T\\d{6}-[0-9a-f]{8}";

/** A new batch id: time-ordered for people, random enough never to collide; never digits only, no `:`. */
export function newBatchId(now: Date = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "");
  return `b${stamp}-${randomBytes(4).toString("hex")}`;
}

/**
 * Records a batch and queues its rows. About 120 lines because its steps (resume or duplicate, the
 * approval gate, chunked record-then-enqueue) must run in this order around one set of counters; each
 * step says why it is where it is.
 */
export async function submitBatch(options: SubmitBatchOptions): Promise<SubmitBatchResult> {
  const { store, enqueuer } = options;
  if ((options.staged === undefined) === (options.instructions === undefined))
    throw new TypeError("submitBatch: give the rows either as instructions or as staged rows, not both");
  const now = options.now ?? (() => new Date());
  const gate = options.gate;
  // Resuming finishes the earlier batch from ITS archive: what was accepted then, not this reading.
  const finishEarlier = async (earlier: BatchRecord): Promise<SubmitBatchResult> => {
    const enqueued = await resumeBatch(store, enqueuer, earlier.id, gate);
    return {
      batchId: earlier.id,
      resumed: true,
      rowCount: earlier.rowCount,
      invalidCount: earlier.invalidCount,
      enqueued,
      ...((await isHeld(earlier.id, gate)) ? { awaitingApproval: true } : {}),
    };
  };
  // A batch whose rows are all recorded and which waits for (or was refused) approval is not an
  // interrupted submission: the same file again is a duplicate of it, as of a completed batch.
  const submitted = async (b: BatchRecord) =>
    b.enqueueComplete || (b.rowsRecorded && (await isHeld(b.id, gate)));

  const earlier = await earlierSubmission(store, options.dataDir, options.fileSha256);
  if (earlier?.batch) {
    // The same file again while its first submission is unfinished: finish that one, never a second.
    if (!(await submitted(earlier.batch))) return finishEarlier(earlier.batch);
    if (!options.allowDuplicateFile) throw new DuplicateFileError(earlier.id);
  } else if (earlier && !options.allowDuplicateFile) {
    throw new DuplicateFileError(earlier.id, true);
  }

  const batchId = options.batchId ?? newBatchId(now());
  const createdAt = now().toISOString();
  const archivePath = archivePathFor(options.dataDir, batchId);
  const meta = {
    id: batchId,
    fileSha256: options.fileSha256,
    fileKey: fileKeyFor(options.fileSha256),
    sourceName: options.sourceName,
    entityId: options.entityId,
    createdAt,
    sheet: options.sheet ?? { columns: [], keys: [], format: "csv" as const },
    ...(options.submittedBy === undefined ? {} : { submittedBy: options.submittedBy }),
  };
  const tally = options.staged
    ? await archiveStagedRows(archivePath, meta, options.staged)
    : await writeInstructionArchive(archivePath, {
        batch: meta,
        instructions: options.instructions ?? [],
        invalidRows: options.invalidRows ?? [],
      });
  const batch: BatchRecord = {
    ...meta,
    rowCount: tally.rows,
    invalidCount: tally.invalid,
    rowsRecorded: false,
    enqueueComplete: false,
    archivePath,
  };
  const holder = await store.claimFile(options.fileSha256, batchId, options.allowDuplicateFile === true);
  if (holder !== batchId) {
    // Another submission of the same content won the race: defer to it. Its batch record follows its
    // claim within moments, so wait for it; only a claim whose record never comes (its submitter died
    // between the two) is taken over.
    const earlier = await batchRecordOf(store, holder);
    if (earlier && !options.allowDuplicateFile) {
      if (await submitted(earlier)) throw new DuplicateFileError(holder);
      return finishEarlier(earlier);
    }
    await store.claimFile(options.fileSha256, batchId, true);
  }
  await recordArchivedFile(options.dataDir, options.fileSha256, batchId);
  // The one approval check of the submission path: decided before the batch is recorded, so every
  // later step (and every resume of it) knows whether its rows may be queued.
  const held =
    (await gate?.hold({
      batchId,
      submittedBy: options.submittedBy ?? "",
      requestedAt: new Date(createdAt),
      totals: tally.totals,
    })) === true;
  // The feed starts before the rows are recorded, so payments start with the first chunk; it stops at
  // a row listed but not recorded yet. A held batch gets none: approving it starts it (src/approvals).
  // The record and the feed are written in one round trip, in this order (a feed whose batch record
  // is missing is dropped by the feeder, never fed).
  const feeder = held ? undefined : new BatchFeeder(store, enqueuer);
  await Promise.all([store.createBatch(batch), feeder?.startFeed(batchId)]);
  // Chunk by chunk from the archive; after each, the feed is topped up (by this process unless a
  // worker is feeding right now), so payments start while later chunks are recorded. A batch of one
  // chunk is topped up once, below, when its rows are all recorded (a top-up reads every batch being
  // fed: one per sheet is enough for a folder of small sheets). A crash leaves the batch incomplete for
  // resumeBatch.
  const topUpAfterChunks = feeder !== undefined && tally.rows > ROW_CHUNK;
  await recordArchivedRows(
    store,
    archivePath,
    batchId,
    topUpAfterChunks ? () => feeder.topUp().then(() => undefined) : undefined,
  );
  await store.markRowsRecorded(batchId);
  if (!feeder) {
    // Stays incomplete: approving it queues the rows (src/approvals), rejecting or expiry cancels them.
    return {
      batchId,
      resumed: false,
      rowCount: tally.rows,
      invalidCount: tally.invalid,
      enqueued: 0,
      awaitingApproval: true,
    };
  }
  await feeder.topUp({ waitForLockMs: FEED_LOCK_WAIT_MS });
  await store.markEnqueueComplete(batchId);
  return {
    batchId,
    resumed: false,
    rowCount: tally.rows,
    invalidCount: tally.invalid,
    enqueued: tally.rows,
  };
}

async function isHeld(batchId: string, gate: SubmissionGate | undefined): Promise<boolean> {
  return gate !== undefined && !(await gate.mayEnqueue(batchId));
}

/**
 * The batch a file's content was accepted as before, by Redis or else by the archive on disk, with
 * its record when Redis still has it.
 */
async function earlierSubmission(
  store: BatchStore,
  dataDir: string,
  fileSha256: string,
): Promise<{ id: string; batch: BatchRecord | undefined } | undefined> {
  const inRedis = await store.batchIdForFile(fileSha256);
  const batch = inRedis === undefined ? undefined : await store.getBatch(inRedis);
  if (inRedis !== undefined && batch) return { id: inRedis, batch };
  const onDisk = await archivedBatchForFile(dataDir, fileSha256);
  if (onDisk === undefined) return undefined;
  return { id: onDisk, batch: await store.getBatch(onDisk) };
}

/** How long a claim's batch record may take to appear before the claim counts as abandoned. */
const CLAIM_RECORD_WAIT_MS = 5_000;

async function batchRecordOf(store: BatchStore, batchId: string): Promise<BatchRecord | undefined> {
  const deadline = Date.now() + CLAIM_RECORD_WAIT_MS;
  for (;;) {
    const batch = await store.getBatch(batchId);
    if (batch || Date.now() >= deadline) return batch;
    await sleep(100);
  }
}

/** Chunks written concurrently: enough to keep Redis busy instead of waiting on round trips. */
const CHUNKS_IN_FLIGHT = 4;

/**
 * Runs `work` over the chunks of `chunks`, a few at a time (each lane takes the next chunk when it is
 * done with one); the first failure fails the whole and stops the other lanes taking more.
 */
async function inLanes<T>(chunks: AsyncIterable<T[]>, work: (chunk: T[]) => Promise<void>): Promise<void> {
  // Concurrent next() calls on one async iterator are queued by it: each chunk goes to one lane.
  const source = chunks[Symbol.asyncIterator]();
  let failed = false;
  const lane = async () => {
    while (!failed) {
      const next = await source.next();
      if (next.done) return;
      try {
        await work(next.value);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: CHUNKS_IN_FLIGHT }, lane));
}

/** `items` in arrays of ROW_CHUNK (the last one shorter). */
async function* chunked<T>(items: RowSource<T>): AsyncGenerator<T[]> {
  let chunk: T[] = [];
  for await (const item of items) {
    chunk.push(item);
    if (chunk.length === ROW_CHUNK) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}

/**
 * Records a batch's rows from its archive (the intent as accepted), streaming: invalid rows and valid
 * rows in chunks; `afterChunk` runs on each chunk of valid rows once they are recorded (a top-up).
 */
async function recordArchivedRows(
  store: BatchStore,
  archivePath: string,
  batchId: string,
  afterChunk?: (chunk: SubmittedInstruction[]) => Promise<void>,
): Promise<void> {
  async function* validRows(): AsyncGenerator<SubmittedInstruction> {
    let invalid: InvalidRowInput[] = [];
    for await (const entry of archiveEntries(archivePath)) {
      if (entry.kind === "row") yield entry.instruction;
      else if (entry.kind === "invalid") {
        invalid.push(entry.row);
        if (invalid.length === ROW_CHUNK) {
          await store.recordInvalidRows(batchId, invalid);
          invalid = [];
        }
      }
    }
    await store.recordInvalidRows(batchId, invalid);
  }
  await inLanes(chunked(validRows()), async (chunk) => {
    await store.recordRows(batchId, chunk);
    await afterChunk?.(chunk);
  });
}

/**
 * Finishes an interrupted submission: records missing rows from the batch's archive (the intent as it
 * was accepted), gives the batch its feed unless it has one (a feed carries on from
 * its cursor), tops it up, and marks the batch complete. Returns the batch's rows `queued` (to be
 * paid). Safe to run any number of times, concurrently too. A batch the gate holds gets its rows
 * recorded only (src/approvals queues or cancels them once it is decided).
 */
export async function resumeBatch(
  store: BatchStore,
  enqueuer: RowEnqueuer,
  batchId: string,
  gate?: SubmissionGate,
): Promise<number> {
  const batch = await store.getBatch(batchId);
  if (!batch) throw new Error(`batch ${batchId} is not recorded`);
  if (!batch.rowsRecorded) {
    if (!batch.archivePath) throw new Error(`batch ${batchId} has no archive to finish its rows from`);
    await recordArchivedRows(store, batch.archivePath, batchId);
    await store.markRowsRecorded(batchId);
  }
  if (await isHeld(batchId, gate)) return 0;
  const queued = await queuedRowCount(store, batchId);
  const feeder = new BatchFeeder(store, enqueuer);
  await feeder.startFeed(batchId);
  await feeder.topUp({ waitForLockMs: FEED_LOCK_WAIT_MS });
  await store.markEnqueueComplete(batchId);
  return queued;
}

/**
 * What a worker runs on start: finishes every interrupted submission. Returns the batch ids finished
 * (not those the gate holds: they wait for approval, they are not interrupted).
 */
export async function resumeIncompleteBatches(
  store: BatchStore,
  enqueuer: RowEnqueuer,
  gate?: SubmissionGate,
): Promise<string[]> {
  const finished: string[] = [];
  for (const batchId of await store.batchIdsAwaitingEnqueue()) {
    const batch = await store.getBatch(batchId);
    if (!batch) continue;
    await resumeBatch(store, enqueuer, batchId, gate);
    if (!(await isHeld(batchId, gate))) finished.push(batchId);
  }
  return finished;
}
