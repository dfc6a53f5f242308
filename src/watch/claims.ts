/**
 * Claiming and leasing files in processing/: how one watcher (of several on one folder) comes to hold
 * a file, keeps holding it while it works, and how a file left by a crash is found again. Nothing here
 * knows what a sheet is; `./sheet-intake.ts` decides what becomes of a claimed file.
 *
 * The rename into processing/ is the lock: when two watchers go for the same file only one rename
 * succeeds, the other sees ENOENT and moves on. Each claim gets its own sub-folder, so a file keeps its
 * own name and two files of the same name never overwrite each other. While a file is held its
 * modification time is refreshed (the lease); a file in processing/ whose lease ran out was left by a
 * crash (or a transient failure) and may be claimed again, again by a rename. Every path out of
 * processing/ is a rename that never overwrites.
 */
import { randomBytes } from "node:crypto";
import { lstat, lutimes, mkdir, readdir, rename, rmdir } from "node:fs/promises";
import path from "node:path";
import { numberedName } from "./file-rules.js";

/** A file in processing/ whose lease ran out, and the claim folder it sits in (if any). */
export interface AbandonedFile {
  file: string;
  name: string;
}

export interface Claims {
  /** Renames `source` into a fresh claim folder under processing/; undefined when someone else got it. */
  claim(source: string, name: string): Promise<string | undefined>;
  /** Refreshes the claimed file's lease every third of the lease until the returned function is called. */
  holdLease(claimed: string): () => void;
  /** Removes the claim folder of a file that has been moved out (nothing happens if it is not empty). */
  release(claimed: string): Promise<void>;
  /**
   * Moves a file to `dir` under `name`, or `name.2`… when that is taken, and removes the claim folder
   * it leaves empty; the path it got.
   */
  moveTo(dir: string, from: string, name: string): Promise<string>;
  /** Files in processing/ whose lease ran out; tidies claim folders a crash left empty. */
  abandoned(): Promise<AbandonedFile[]>;
  /** Claims an abandoned file afresh (a rename, so two resumers never both get it); undefined if lost. */
  reclaim(file: AbandonedFile): Promise<string | undefined>;
}

export function createClaims(processingDir: string, leaseMs: number): Claims {
  const claims: Claims = {
    async claim(source, name) {
      const claimDir = path.join(processingDir, claimId());
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
    },

    holdLease(claimed) {
      const heartbeat = setInterval(() => void touch(claimed), Math.max(10, Math.floor(leaseMs / 3)));
      heartbeat.unref();
      return () => clearInterval(heartbeat);
    },

    async release(claimed) {
      await rmdir(path.dirname(claimed)).catch(() => undefined);
    },

    async moveTo(dir, from, name) {
      const target = await freeName(dir, name);
      await rename(from, target);
      // A file moved out of its claim folder takes the folder with it at once, so a sheet seen in
      // archive/ or rejected/ leaves no empty folder in processing/ behind while its caller winds up.
      const claimDir = path.dirname(from);
      if (path.dirname(claimDir) === processingDir) await rmdir(claimDir).catch(() => undefined);
      return target;
    },

    async abandoned() {
      const found: AbandonedFile[] = [];
      const cutoff = Date.now() - leaseMs;
      for (const entry of await readdir(processingDir, { withFileTypes: true })) {
        const entryPath = path.join(processingDir, entry.name);
        if (entry.isDirectory()) {
          const inner = await readdir(entryPath).catch(() => [] as string[]);
          if (inner.length === 0 && (await olderThan(entryPath, cutoff))) {
            await rmdir(entryPath).catch(() => undefined); // a crash between moving out and tidying up
          }
          for (const name of inner) found.push({ file: path.join(entryPath, name), name });
        } else if (!entry.name.startsWith(".")) {
          // A file put straight into processing/ (by hand, or by an older version) counts as abandoned.
          found.push({ file: entryPath, name: entry.name });
        }
      }
      const expired: AbandonedFile[] = [];
      // A file whose lease is fresh has an owner alive and working.
      for (const f of found) if (await olderThan(f.file, cutoff)) expired.push(f);
      return expired;
    },

    async reclaim(file) {
      const claimed = await claims.claim(file.file, file.name);
      const oldDir = path.dirname(file.file);
      if (claimed && oldDir !== processingDir) await rmdir(oldDir).catch(() => undefined);
      return claimed;
    },
  };
  return claims;
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

/** A unique, sortable name: the time and random hex (`20261122T031500-1a2b3c4d`). */
export function claimId(): string {
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

export function isCode(err: unknown, code: string): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === code;
}
