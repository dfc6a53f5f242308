/**
 * The result files of one process: written on request (the HTTP download, the outbox), with
 * concurrent requests for the same file sharing one write, and a recent write reused instead of
 * rewriting 100k rows for every download.
 *
 * When is a file fresh enough to reuse? Redis has no "last changed" stamp per batch, so a file is
 * reused while younger than `maxAgeMs` (a download is then at most that stale, like the outbox's own
 * debounce), or for as long as the batch is final and its state counts are unchanged since the
 * write: terminal rows take no field changes, and anything that moves a row (an operator retry, a
 * late adoption of an `error` row) changes the counts.
 *
 * Downloads never add a file to `outbox/` (where people and programs pick up result files, and where a
 * stale XLSX beside the final CSV would mislead them): a download is served from the outbox's own
 * current file when there is one, else written to `DATA_DIR/downloads/` (one file per batch and format,
 * replaced by the next download).
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import type { BatchStore } from "../batches/index.js";
import {
  defaultResultPath,
  type ResultFormat,
  UnknownBatchError,
  type WrittenResult,
  writeResultFile,
} from "./write-result.js";

export interface ResultFilesOptions {
  store: BatchStore;
  /** DATA_DIR: files go to `DATA_DIR/outbox/`. */
  dataDir: string;
  /** How long a written file is served as current. Default 2000 ms. */
  maxAgeMs?: number;
  /** Clock (tests). */
  now?: () => number;
}

export interface ResultFiles {
  /**
   * The path of a current result file of the batch in `format` (default: the sheet's), writing it if
   * needed; undefined for an unknown batch. For `GET /batches/:id/result.csv|.xlsx`.
   */
  resultFile(batchId: string, format?: ResultFormat): Promise<string | undefined>;
  /** Writes the batch's result file to `outbox/` now (joining a write of the same file under way). */
  write(batchId: string, format?: ResultFormat): Promise<WrittenResult>;
}

interface WriteRecord {
  path: string;
  writtenAt: number;
  /** The batch's state counts when the write started, and whether every row was final then. */
  fingerprint: string;
  final: boolean;
}

export const DEFAULT_RESULT_MAX_AGE_MS = 2000;
/** Marks the writes made for a download (to `downloads/`), apart from the outbox's. */
const DOWNLOAD = "download|";

export function createResultFiles(options: ResultFilesOptions): ResultFiles {
  const { store, dataDir } = options;
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_RESULT_MAX_AGE_MS;
  const now = options.now ?? Date.now;
  const inFlight = new Map<string, Promise<WrittenResult>>();
  const queued = new Map<string, Promise<WrittenResult>>();
  const written = new Map<string, WriteRecord>();

  async function fingerprintOf(
    batchId: string,
  ): Promise<{ fingerprint: string; final: boolean } | undefined> {
    const progress = await store.progress(batchId);
    if (!progress) return undefined;
    return {
      fingerprint: JSON.stringify(progress.counts),
      final: progress.batch.rowsRecorded && progress.done >= progress.batch.rowCount,
    };
  }

  /**
   * Starts a write of `id` now (to `outbox/`, or for a download to `downloads/`); the record is kept
   * for {@link resultFile}'s reuse.
   */
  function start(id: string, batchId: string, format: ResultFormat): Promise<WrittenResult> {
    const task = (async () => {
      const startedAt = now();
      // Taken before the rows are read, so a change during the write makes the record look older.
      const state = await fingerprintOf(batchId);
      const forDownload = id.startsWith(DOWNLOAD);
      let outPath: string | undefined;
      if (forDownload) {
        const batch = await store.getBatch(batchId);
        if (!batch) throw new UnknownBatchError(batchId);
        outPath = path.join(dataDir, "downloads", path.basename(defaultResultPath(dataDir, batch, format)));
      }
      const result = await writeResultFile(store, batchId, { format, dataDir, outPath });
      if (state) written.set(id, { path: result.path, writtenAt: startedAt, ...state });
      return result;
    })().finally(() => {
      if (inFlight.get(id) === task) inFlight.delete(id);
    });
    inFlight.set(id, task);
    return task;
  }

  async function write(batchId: string, format?: ResultFormat): Promise<WrittenResult> {
    const batch = await store.getBatch(batchId);
    if (!batch) throw new UnknownBatchError(batchId);
    const chosen = format ?? batch.sheet.format;
    const id = `${batchId}|${chosen}`;
    const running = inFlight.get(id);
    if (!running) return start(id, batchId, chosen);
    // The write under way may have read rows before the change this caller reports: queue one
    // follow-up write, shared by every caller that arrives while the current one runs.
    let next = queued.get(id);
    if (!next) {
      next = running
        .catch(() => undefined)
        .then(() => {
          queued.delete(id);
          return start(id, batchId, chosen);
        });
      queued.set(id, next);
    }
    return next;
  }

  /** A written file still current enough to serve, or undefined. */
  async function reusable(id: string, batchId: string): Promise<string | undefined> {
    const record = written.get(id);
    if (!record || !(await stillOnDisk(record.path))) return undefined;
    if (now() - record.writtenAt < maxAgeMs) return record.path;
    if (record.final) {
      const current = await fingerprintOf(batchId);
      if (current?.final && current.fingerprint === record.fingerprint) return record.path;
    }
    return undefined;
  }

  async function resultFile(batchId: string, format?: ResultFormat): Promise<string | undefined> {
    const batch = await store.getBatch(batchId);
    if (!batch) return undefined;
    const chosen = format ?? batch.sheet.format;
    const outboxId = `${batchId}|${chosen}`;
    const downloadId = `${DOWNLOAD}${outboxId}`;
    const current = (await reusable(outboxId, batchId)) ?? (await reusable(downloadId, batchId));
    if (current) return current;
    try {
      // A download may share a write already under way: it is at most that write's age stale.
      const running = inFlight.get(outboxId) ?? inFlight.get(downloadId);
      return (await (running ?? start(downloadId, batchId, chosen))).path;
    } catch (error) {
      if (error instanceof UnknownBatchError) return undefined;
      throw error;
    }
  }

  return { resultFile, write };
}

async function stillOnDisk(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
