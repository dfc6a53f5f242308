/**
 * "Is the copy finished?" There is no portable way to know whether another program still has a file
 * open, so a file counts as complete once nobody has touched it for the quiet period: neither its
 * modification time nor its change time (which moves on every write, rename and metadata change, and
 * cannot be set back by a copier that preserves modification times) is more recent than that. A file
 * that has lain untouched for longer is complete at the first look; one renamed in, or still being
 * written, is looked at again when its quiet period would end.
 *
 * The quiet period must be longer than any pause of a writer: a copy that stalls longer than it is
 * taken incomplete. What is taken is then read once into a snapshot and checked again (a file that
 * changes while it is read is refused, never paid: ./read-snapshot.ts), but a writer that stays silent
 * for the whole quiet period and resumes only after the sheet was read cannot be told from a finished
 * one. Hence a generous default, and the advice to write elsewhere and move a sheet in when complete.
 */
import { lstat } from "node:fs/promises";
import path from "node:path";
import pLimit from "p-limit";

/** Default quiet period: a file untouched this long is complete. Setting: WATCH_STABLE_MS, `--stable-ms`. */
export const DEFAULT_STABLE_MS = 10_000;

/** How many files are looked at (lstat) at once in one pass over a folder. */
const LOOKS_AT_ONCE = 64;

/** One file's verdict: complete now, gone, or not yet (with how long until it could be). */
export type Look = { kind: "stable" } | { kind: "gone" } | { kind: "wait"; ms: number };

/** When a file was last touched: its modification or change time, whichever is later. */
export function lastTouchedMs(s: { mtimeMs: number; ctimeMs: number }): number {
  return Math.max(s.mtimeMs, s.ctimeMs);
}

/** The verdict for a file last touched at `touchedMs` (pure). */
export function verdictAt(touchedMs: number, nowMs: number, quietMs: number): Look {
  const quietFor = nowMs - touchedMs;
  return quietFor >= quietMs ? { kind: "stable" } : { kind: "wait", ms: quietMs - quietFor };
}

/** Looks at every named file of `folder` in one pass (a bounded number at once). */
export async function lookAtFiles(
  folder: string,
  names: readonly string[],
  quietMs: number,
  now: () => number = Date.now,
): Promise<Map<string, Look>> {
  const limit = pLimit(LOOKS_AT_ONCE);
  const looks = new Map<string, Look>();
  await Promise.all(
    names.map((name) =>
      limit(async () => {
        try {
          const s = await lstat(path.join(folder, name));
          looks.set(name, verdictAt(lastTouchedMs(s), now(), quietMs));
        } catch {
          looks.set(name, { kind: "gone" });
        }
      }),
    ),
  );
  return looks;
}
