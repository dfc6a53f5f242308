/**
 * Atomic file writes (docs/design.md §3.7): readers of a result file, a report or a template never see a
 * half-written file. The data goes to a temp file in the target's own directory (so the final rename
 * never crosses a file system), is flushed to disk, and is then renamed over the target in one step.
 * On any failure the temp file is removed and an existing target is left exactly as it was.
 */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import type { FileHandle } from "node:fs/promises";
import { lstat, open, readdir, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import type { LogSink } from "../logging/index.js";

/** Streams the content into `out`. It may end `out` itself; if it does not, it is ended for it. */
export type StreamProducer = (out: Writable) => Promise<void>;

export interface AtomicWriteOptions {
  /** File mode of a newly created file (before the umask). Default `0o644`. */
  mode?: number;
}

/** The temp-file name used beside `target`: hidden, unique, and recognisable as ours (`.tmp`). */
export function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
}

/** Writes `data` (text is UTF-8) or what `producer` streams to `target`, all or nothing. */
export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array | StreamProducer,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const temp = tempPathFor(target);
  // "wx": never follow or reuse an existing file under the temp name.
  const handle = await open(temp, "wx", options.mode ?? 0o644).catch((error: unknown) => {
    throw namingTarget(error, target, temp);
  });
  let closed = false;
  try {
    // The data must be on disk before the rename makes it visible, or a crash could publish an
    // empty file. streamInto syncs before it releases the handle (its stream closes the handle).
    if (typeof data === "function") {
      await streamInto(handle, data);
    } else {
      await handle.writeFile(data);
      await handle.sync();
    }
    await handle.close();
    closed = true;
    await rename(temp, target);
  } catch (error) {
    if (!closed) await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw namingTarget(error, target);
  }
  await syncDirectory(dirname(target));
}

/**
 * A write's error (ENOSPC, EIO...) names no file; the one it failed to write is the target (the temp
 * name is ours and gone), so whoever reports it can say which.
 */
function namingTarget(error: unknown, target: string, temp?: string): unknown {
  const errno = error as NodeJS.ErrnoException;
  if (
    error instanceof Error &&
    typeof errno.code === "string" &&
    (errno.path === undefined || errno.path === temp)
  ) {
    errno.path = target;
    errno.syscall ??= "write";
  }
  return error;
}

async function streamInto(handle: FileHandle, producer: StreamProducer): Promise<void> {
  // autoClose off: the handle must stay open for the fsync after the stream finishes.
  const out = handle.createWriteStream({ autoClose: false });
  // Errors are reported through `settled` below; this keeps a late error (a producer still writing
  // after it failed) from becoming an uncaught exception.
  out.on("error", () => undefined);
  // A producer that waits for the stream to drain (exceljs's zip writer does, and so does a plain
  // `await once(out, "drain")` begun after the stream failed) would wait for ever once the file
  // cannot be written (ENOSPC): the stream's error ends the wait instead, so the temp file is removed
  // and its handle closed here, never left to the garbage collector.
  const streamFailed = new Promise<never>((_, reject) => out.once("error", reject));
  streamFailed.catch(() => undefined);
  try {
    await Promise.race([producer(out), streamFailed]);
    if (!out.writableEnded) out.end();
    await settled(out);
    await handle.sync();
  } catch (error) {
    // Not destroy() straight away: a write may still be in flight on the handle, and destroying
    // under it throws asynchronously. Ending lets it complete; the temp file is deleted after.
    if (!out.writableEnded) out.end();
    await settled(out).catch(() => undefined);
    throw error;
  } finally {
    // A live stream holds a reference on the handle, and FileHandle.close() waits for it forever.
    out.destroy();
    if (!out.closed) await once(out, "close").catch(() => undefined);
  }
}

/** Resolves when every written chunk reached the file; rejects on the stream's error. */
function settled(out: Writable): Promise<void> {
  if (out.errored) return Promise.reject(out.errored);
  if (out.writableFinished) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onFinish = () => {
      out.off("error", onError);
      resolve();
    };
    const onError = (error: Error) => {
      out.off("finish", onFinish);
      reject(error);
    };
    out.once("finish", onFinish);
    out.once("error", onError);
  });
}

/** Makes the rename itself durable. Best effort: some file systems refuse to fsync a directory. */
async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch {
    // The file content is already durable; only the directory entry might be lost on power failure.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Our temp names (see {@link tempPathFor}): `.<name>.<12 hex>.tmp`. */
const TEMP_NAME = /^\..+\.[0-9a-f]{12}\.tmp$/;

/**
 * Removes temp files of ours in `dir` older than `olderThanMs`: a write removes its own temp file when
 * it fails, so one left there belongs to a process that was killed mid-write. Best effort.
 */
export async function removeStaleTempFiles(dir: string, olderThanMs = 60 * 60 * 1000): Promise<string[]> {
  const removed: string[] = [];
  const names = await readdir(dir).catch(() => [] as string[]);
  const cutoff = Date.now() - olderThanMs;
  for (const name of names) {
    if (!TEMP_NAME.test(name)) continue;
    const file = join(dir, name);
    const info = await lstat(file).catch(() => undefined);
    if (info?.isFile() && info.mtimeMs < cutoff) {
      await unlink(file).catch(() => undefined);
      removed.push(file);
    }
  }
  return removed;
}

/**
 * `writeFileAtomic`, tried again while it fails (a disk that fills for a moment): `tries` times in all,
 * waiting `firstDelayMs`, then twice as long each time. Each failure is logged at warn; if the last try
 * fails too, the error is logged with the whole text (so what the file should have said is not lost)
 * and thrown.
 */
export async function writeFileAtomicPatiently(
  target: string,
  text: string,
  options: { logger?: LogSink | undefined; tries?: number; firstDelayMs?: number } = {},
): Promise<void> {
  const tries = options.tries ?? 6;
  for (let attempt = 1; ; attempt++) {
    try {
      await writeFileAtomic(target, text);
      return;
    } catch (err) {
      const fields = { file: target, attempt, err };
      if (attempt >= tries) {
        options.logger?.error({ ...fields, text }, "file not written; giving up on it (its text is here)");
        throw err;
      }
      options.logger?.warn(fields, "file not written; retrying");
      await sleep((options.firstDelayMs ?? 1_000) * 2 ** (attempt - 1));
    }
  }
}
