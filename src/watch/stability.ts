/**
 * "Is the copy finished?" There is no portable way to know whether another program still has a file
 * open, so a file counts as complete when its size and modification time are the same at two looks
 * `intervalMs` apart. A file renamed into the folder is complete at the first look, so it costs one
 * interval; a copy that pauses longer than the interval is the one case this cannot see (the
 * half-copied sheet then fails validation and is rejected with its report, never half-paid).
 */
import { lstat } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";

/** Default time between the two looks. */
export const DEFAULT_STABLE_MS = 1_000;

export type Stability = "stable" | "gone" | "aborted";

export async function waitUntilStable(
  file: string,
  intervalMs: number = DEFAULT_STABLE_MS,
  signal?: AbortSignal,
): Promise<Stability> {
  let before = await look(file);
  for (;;) {
    if (before === undefined) return "gone";
    try {
      await sleep(intervalMs, undefined, signal ? { signal } : {});
    } catch {
      return "aborted";
    }
    const after = await look(file);
    if (after === undefined) return "gone";
    if (after.size === before.size && after.mtimeMs === before.mtimeMs) return "stable";
    before = after;
  }
}

async function look(file: string): Promise<{ size: number; mtimeMs: number } | undefined> {
  try {
    const s = await lstat(file);
    return { size: s.size, mtimeMs: s.mtimeMs };
  } catch {
    return undefined;
  }
}
