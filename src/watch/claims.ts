/**
 * Claiming and leasing files in processing/: how one watcher (of several on one folder) comes to hold
 * a file, keeps holding it while it works, and how a file left by a crash is found again. Nothing here
 * knows what a sheet is; `./sheet-intake.ts` decides what becomes of a claimed file.
 *
 * The rename into processing/ is the lock: when two watchers go for the same file only one rename
 * succeeds, the other sees ENOENT and moves on. Each claim gets its own sub-folder, so a file keeps its
 * own name and two files of the same name never overwrite each other. While a file is held its claim
 * folder's modification time is refreshed (the lease; the file itself is never touched, so its own
 * times say whether anyone else wrote to it); a file in processing/ whose lease ran out was left by a
 * crash (or a transient failure) and may be claimed again, again by a rename. Every path out of
 * processing/ is a rename that never overwrites. Hidden entries of a claim folder (the snapshot the
 * intake reads, `./read-snapshot.ts`) are never taken for sheets and go with the folder.
 */
import { randomBytes } from "node:crypto";
import { lstat, lutimes, mkdir, readdir, rename, rm, rmdir } from "node:fs/promises";
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
  /**
   * Removes the claim folder of a file that has been moved out, with its hidden entries (nothing
   * happens while the file is still in it).
   */
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
      // A fresh lease (the rename into the new folder already set its time; this says so explicitly).
      await touch(claimDir);
      return claimed;
    },

    holdLease(claimed) {
      const claimDir = path.dirname(claimed);
      const heartbeat = setInterval(() => void touch(claimDir), Math.max(10, Math.floor(leaseMs / 3)));
      heartbeat.unref();
      return () => clearInterval(heartbeat);
    },

    async release(claimed) {
      await removeClaimFolder(path.dirname(claimed));
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
          // A claim folder whose lease is fresh has an owner alive and working.
          if (!(await olderThan(entryPath, cutoff))) continue;
          const inner = (await readdir(entryPath).catch(() => [] as string[])).filter((n) => !isHidden(n));
          // Empty: a crash between moving the file out and tidying up.
          if (inner.length === 0) await removeClaimFolder(entryPath);
          for (const name of inner) found.push({ file: path.join(entryPath, name), name });
        } else if (!isHidden(entry.name) && (await olderThan(entryPath, cutoff))) {
          // A file put straight into processing/ (by hand, or by an older version) counts as abandoned
          // once its own time is older than a lease.
          found.push({ file: entryPath, name: entry.name });
        }
      }
      return found;
    },

    async reclaim(file) {
      const claimed = await claims.claim(file.file, file.name);
      const oldDir = path.dirname(file.file);
      if (claimed && oldDir !== processingDir) await removeClaimFolder(oldDir);
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

function isHidden(name: string): boolean {
  return name.startsWith(".");
}

/** Removes a claim folder that holds no sheet any more: its hidden entries (a snapshot) go with it. */
async function removeClaimFolder(dir: string): Promise<void> {
  const inner = await readdir(dir).catch(() => undefined);
  if (inner === undefined || inner.some((n) => !isHidden(n))) return;
  await rm(dir, { recursive: true, force: true }).catch(() => undefined);
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
