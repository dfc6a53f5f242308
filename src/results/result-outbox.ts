/**
 * Keeps each batch's result file in `DATA_DIR/outbox/` current while its rows change.
 *
 * Rows change in bursts (a thousand payments created in a second, then webhooks over hours), so
 * writes are throttled per batch: the first change schedules a write `debounceMs` later, changes
 * during that wait or during the write only mark the batch dirty again, and a dirty batch gets one
 * more write REFRESH_FACTOR times `debounceMs` after the previous one ended (or WRITE_SPACING times
 * as long as that write took, if longer: a 1M-row file that takes 20 s to write is rewritten at most
 * every 400 s). So there is at most one write per window per batch, writes of one batch never
 * overlap, and a write always follows the last change.
 */
import path from "node:path";
import type { BatchStore } from "../batches/index.js";
import { removeStaleTempFiles } from "../files/index.js";
import type { LogSink } from "../logging/index.js";
import { createResultFiles, type ResultFiles } from "./result-files.js";
import { UnknownBatchError, type WrittenResult } from "./write-result.js";

export interface ResultOutboxOptions {
  store: BatchStore;
  /** DATA_DIR. */
  dataDir: string;
  /** Minimum time between two writes of one batch's file, in ms. Default 2000. */
  debounceMs?: number;
  /** Share the process's result files (so a download reuses what the outbox just wrote). */
  files?: ResultFiles;
  /** Called after each successful write (logging, notifications). */
  onWritten?: (batchId: string, result: WrittenResult) => void;
  /**
   * Called when a write fails (tests, metrics). A failed write is retried until it succeeds, with a
   * growing wait (see {@link retryDelayMs}), and each failure is logged (warn, then error).
   */
  onError?: (batchId: string, error: unknown) => void;
  /**
   * Each write is logged at info with its rows and duration (what bench:e2e adds up); a failed one at
   * warn, and at error once it failed {@link WARN_FAILURES} times in a row.
   */
  logger?: LogSink;
}

export interface ResultOutbox {
  /** A row of the batch changed: its result file will be rewritten (throttled). */
  markDirty(batchId: string): void;
  /** Writes the batch's file now (e.g. when the batch finished), after any write under way. */
  writeNow(batchId: string): Promise<void>;
  /** Writes every dirty batch now and waits for every write under way. */
  flush(): Promise<void>;
  /** Flushes, then ignores further changes. */
  close(): Promise<void>;
}

interface BatchSlot {
  dirty: boolean;
  timer: NodeJS.Timeout | undefined;
  writing: Promise<void> | undefined;
  /** How long the last write took (ms). */
  lastWriteMs: number;
  /** Writes failed in a row (reset by a success). */
  failures: number;
  /** The file was written since the batch's changes began: the next write is a refresh. */
  written: boolean;
}

/**
 * Failed writes in a row logged at warn (a disk that fills for a moment); from the next one on, error:
 * the file is still retried, but someone must make room (or fix the folder) for it to be written.
 */
export const WARN_FAILURES = 2;

/** The longest wait between two tries of a failing write. */
export const MAX_RETRY_DELAY_MS = 60_000;

/**
 * The wait before the next try after `failures` failed writes in a row: doubling from `debounceMs`,
 * at most {@link MAX_RETRY_DELAY_MS}. A file we must write is never given up on: the final result
 * file of a finished batch gets no further row change to ask for it again.
 */
export function retryDelayMs(debounceMs: number, failures: number): number {
  return Math.min(debounceMs * 2 ** Math.max(0, failures - 1), MAX_RETRY_DELAY_MS);
}

export const DEFAULT_OUTBOX_DEBOUNCE_MS = 2000;

/**
 * A running batch's file is rewritten at most every REFRESH_FACTOR debounce periods (10 s by
 * default): every rewrite reads all of the batch's rows, so a batch paid at a service's pace (a
 * hundred rows a second, say) would otherwise read each row again every few seconds for the few rows
 * that changed. The first write after a batch's changes begin still comes one debounce period after
 * them, and a finished batch's file is written at once.
 */
export const REFRESH_FACTOR = 5;

/**
 * The wait before a batch's next write, in multiples of its last write's duration: at most a
 * twenty-first of the time goes to rewriting a file that is still changing, so rewrites never crowd
 * out the payments (a write reads and encodes every row of the batch, however few of them changed;
 * docs/performance.md). The final file is written at once when the batch finishes.
 */
export const WRITE_SPACING = 20;

/**
 * The outbox. Kept as one closure on purpose: the timers, the writes in flight and the retries of a
 * failed write are per batch and shared by markDirty, writeNow, flush and close, which must see the
 * same state to never write one file twice at once.
 */
export function createResultOutbox(options: ResultOutboxOptions): ResultOutbox {
  const debounceMs = options.debounceMs ?? DEFAULT_OUTBOX_DEBOUNCE_MS;
  const files = options.files ?? createResultFiles({ store: options.store, dataDir: options.dataDir });
  const slots = new Map<string, BatchSlot>();
  let closed = false;
  // Temp files a killed process left in outbox/ (a write that fails removes its own).
  void removeStaleTempFiles(path.join(options.dataDir, "outbox")).then((removed) => {
    if (removed.length > 0) options.logger?.info({ removed }, "removed temp files left by a stopped process");
  });

  function slotOf(batchId: string): BatchSlot {
    let slot = slots.get(batchId);
    if (!slot) {
      slot = {
        dirty: false,
        timer: undefined,
        writing: undefined,
        lastWriteMs: 0,
        failures: 0,
        written: false,
      };
      slots.set(batchId, slot);
    }
    return slot;
  }

  function schedule(batchId: string, slot: BatchSlot): void {
    if (slot.timer || slot.writing || !slot.dirty) return;
    // A big batch waits WRITE_SPACING times as long as its last write took, so keeping its file
    // current costs at most 1/(1 + WRITE_SPACING) of the worker's time whatever the batch size.
    const spacing = Math.max(
      slot.written ? debounceMs * REFRESH_FACTOR : debounceMs,
      slot.lastWriteMs * WRITE_SPACING,
    );
    slot.timer = setTimeout(
      () => {
        slot.timer = undefined;
        void run(batchId, slot);
      },
      slot.failures > 0 ? Math.max(spacing, retryDelayMs(debounceMs, slot.failures)) : spacing,
    );
  }

  /** One write; afterwards, a change that came in meanwhile schedules the next. */
  function run(batchId: string, slot: BatchSlot): Promise<void> {
    if (slot.writing) return slot.writing;
    slot.dirty = false;
    slot.writing = (async () => {
      const startedAt = Date.now();
      try {
        const result = await files.write(batchId);
        if (slot.failures > 0)
          options.logger?.info({ batchId, failedBefore: slot.failures }, "result file written after failing");
        slot.failures = 0;
        slot.written = true;
        options.logger?.info(
          { batchId, rows: result.rows, ms: Date.now() - startedAt },
          "result file written",
        );
        options.onWritten?.(batchId, result);
      } catch (error) {
        // An unknown batch (deleted, or a hook fired for another prefix) has nothing to write.
        if (!(error instanceof UnknownBatchError)) {
          // Redis or the disk may be back soon: retry until written, waiting longer each time.
          slot.failures++;
          slot.dirty = true;
          logFailure(batchId, slot.failures, error);
          options.onError?.(batchId, error);
        }
      } finally {
        slot.writing = undefined;
        slot.lastWriteMs = Date.now() - startedAt;
      }
      if (closed) return;
      if (slot.dirty) schedule(batchId, slot);
      else if (!slot.timer && slot.lastWriteMs * WRITE_SPACING <= debounceMs && slots.get(batchId) === slot) {
        // Forget idle batches; a slow one is kept so its next write waits as long as this one took.
        slots.delete(batchId);
      }
    })();
    return slot.writing;
  }

  function logFailure(batchId: string, failures: number, error: unknown): void {
    const fields = {
      batchId,
      failures,
      retryInMs: closed ? undefined : retryDelayMs(debounceMs, failures),
      err: error,
    };
    if (failures <= WARN_FAILURES) options.logger?.warn?.(fields, "result file not written; retrying");
    else options.logger?.error?.(fields, "result file still not written; retrying until it is");
  }

  async function writeNow(batchId: string): Promise<void> {
    // A write under way may have read the rows before the change that asked for this one.
    const pending = slots.get(batchId)?.writing;
    if (pending) await pending;
    const slot = slotOf(batchId);
    if (slot.timer) {
      clearTimeout(slot.timer);
      slot.timer = undefined;
    }
    // Joins a write that began after this call (it reads the rows as they are now), else starts one.
    await run(batchId, slot);
  }

  async function flush(): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const [batchId, slot] of slots) {
      if (slot.dirty || slot.timer || slot.failures > 0) pending.push(writeNow(batchId));
      else if (slot.writing) pending.push(slot.writing);
    }
    await Promise.all(pending);
  }

  return {
    markDirty(batchId) {
      if (closed) return;
      const slot = slotOf(batchId);
      slot.dirty = true;
      schedule(batchId, slot);
    },
    writeNow,
    flush,
    async close() {
      await flush();
      closed = true;
      for (const [batchId, slot] of slots) {
        if (slot.timer) clearTimeout(slot.timer);
        // Nobody will retry it after this: say how it gets written.
        if (slot.failures > 0)
          options.logger?.error?.(
            { batchId, failures: slot.failures },
            `result file not written before stopping: \`payouts result ${batchId}\` writes it once the cause is fixed`,
          );
      }
      slots.clear();
    },
  };
}
