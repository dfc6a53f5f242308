/**
 * "A file is paid only as it was when it was read" (docs/design.md §3.12). A claimed sheet is copied,
 * exactly the bytes it had when claimed, into a private snapshot while they are hashed; everything
 * after (validation, the archive, submission) reads only the snapshot, which nobody else writes. The
 * original is then checked again (size, modification and change times, and its hash): a file that
 * changed was still being written, and is refused rather than paid as it happened to be.
 */
import { createHash } from "node:crypto";
import { type FileHandle, mkdir, open, rm } from "node:fs/promises";
import path from "node:path";

/** What was read: the snapshot and what the original looked like when it was read. */
export interface ReadSnapshot {
  /** The private copy: `<claim folder>/.read/<name>`, so it keeps the sheet's own name. */
  path: string;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  /** SHA-256 of the bytes read, hex. */
  sha256: string;
}

/** The hidden folder beside a claimed file that holds its snapshot. */
export const SNAPSHOT_FOLDER = ".read";

/** Where the snapshot of `claimed` goes. */
export function snapshotPathOf(claimed: string): string {
  return path.join(path.dirname(claimed), SNAPSHOT_FOLDER, path.basename(claimed));
}

/**
 * Copies the `size` bytes `claimed` has now into its snapshot, hashing them on the way; a file that
 * changes while it is copied is reported by `changeSince` (the copy holds only the claimed bytes).
 */
export async function takeSnapshot(claimed: string): Promise<ReadSnapshot> {
  const target = snapshotPathOf(claimed);
  await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
  const source = await open(claimed, "r");
  try {
    const before = await source.stat();
    const out = await open(target, "w", 0o600);
    let sha256: string;
    try {
      sha256 = await eachChunk(source, before.size, (chunk) => out.write(chunk));
      await out.sync();
    } finally {
      await out.close();
    }
    return { path: target, size: before.size, mtimeMs: before.mtimeMs, ctimeMs: before.ctimeMs, sha256 };
  } catch (err) {
    await rm(target, { force: true });
    throw err;
  } finally {
    await source.close();
  }
}

/**
 * How `claimed` differs from what `read` saw, in words for the note, or undefined when it is exactly
 * as it was read (same size, same times, same bytes).
 */
export async function changeSince(claimed: string, read: ReadSnapshot): Promise<string | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(claimed, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "it was removed while it was being read";
    throw err;
  }
  try {
    const now = await handle.stat();
    if (now.size !== read.size)
      return `its size changed from ${read.size} to ${now.size} bytes while it was being read`;
    if (now.mtimeMs !== read.mtimeMs || now.ctimeMs !== read.ctimeMs)
      return `it was written to (modified ${new Date(now.mtimeMs).toISOString()}) while it was being read`;
    if ((await eachChunk(handle, now.size, async () => undefined)) !== read.sha256)
      return "its content changed while it was being read (same size and time)";
    return undefined;
  } finally {
    await handle.close();
  }
}

/** Bytes read at a time. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * Reads the first `size` bytes of `file` (no more: what it had when looked at), handing each chunk to
 * `use`; the SHA-256 of what was read, hex. A file shorter than `size` by now ends the read early (the
 * caller's later look sees the change).
 */
async function eachChunk(
  file: FileHandle,
  size: number,
  use: (chunk: Uint8Array) => Promise<unknown>,
): Promise<string> {
  const hash = createHash("sha256");
  const buffer = Buffer.alloc(Math.min(CHUNK_BYTES, Math.max(size, 1)));
  for (let position = 0; position < size; ) {
    const { bytesRead } = await file.read(buffer, 0, Math.min(buffer.length, size - position), position);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    hash.update(chunk);
    await use(chunk);
    position += bytesRead;
  }
  return hash.digest("hex");
}

/** The note's advice when a sheet changed under us: nothing was paid, and how to hand it over. */
export const CHANGED_FILE_ADVICE =
  "Nothing from it was paid. A program was probably still writing it. Check that it is complete and " +
  "drop it into the folder again; to avoid this, write it elsewhere (or under a .tmp or .part name) and " +
  "move or rename it into the folder once it is complete.";
