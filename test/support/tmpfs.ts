/**
 * A small tmpfs mounted for a test, so "the disk is full" is real (ENOSPC from the kernel) and nothing
 * else on the machine fills up. Needs root (mount): where mounting is not permitted the caller skips,
 * with the reason this gives.
 */
import { execFile } from "node:child_process";
import { mkdtemp, open, rm, rmdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface SmallDisk {
  /** The mount point. */
  dir: string;
  /** Writes a filler file until the disk is full. */
  fill(): Promise<void>;
  /** Removes the filler: the disk has room again. */
  free(): Promise<void>;
  /** Unmounts and removes the mount point. */
  remove(): Promise<void>;
}

/** A fresh tmpfs of `sizeKb`, or why one cannot be mounted here. */
export async function mountSmallDisk(sizeKb: number): Promise<SmallDisk | { unavailable: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "payouts-small-disk-"));
  try {
    await run("mount", ["-t", "tmpfs", "-o", `size=${sizeKb}k`, "tmpfs", dir]);
  } catch (err) {
    await rmdir(dir).catch(() => undefined);
    const why = (err as { stderr?: string }).stderr?.trim() || (err as Error).message;
    return { unavailable: `mounting a tmpfs is not permitted here (${why})` };
  }
  const filler = path.join(dir, ".filler");
  return {
    dir,
    async fill() {
      const handle = await open(filler, "a");
      try {
        // Smaller and smaller chunks, so not even a page is left for another file.
        for (const size of [64 * 1024, 4 * 1024, 512, 1]) {
          const chunk = Buffer.alloc(size);
          try {
            for (;;) await handle.write(chunk);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
          }
        }
      } finally {
        await handle.close();
      }
    },
    async free() {
      await rm(filler, { force: true });
    },
    async remove() {
      await run("umount", ["-l", dir]).catch(() => undefined);
      await rmdir(dir).catch(() => undefined);
    },
  };
}
