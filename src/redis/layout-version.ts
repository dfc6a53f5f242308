/**
 * The version of the layout this code writes in Redis (keys, row encodings, script arguments), kept
 * under `<prefix>:layout`. Every process checks it at start and refuses to run against a layout it
 * does not know, instead of misreading rows written by another version. `payouts migrate` moves a
 * store forward through the steps listed in {@link MIGRATIONS}.
 *
 * A store without the key is either empty or was written by 0.1.0 before the key existed (layout 1,
 * before the duplicate index, the only thing a later step changes): both are stamped with the
 * current version on first contact.
 */

import { Cluster } from "ioredis";
import { PayoutsError } from "../errors/index.js";
import type { RedisClient } from "./connect.js";

/** The layout this code reads and writes. Raise it with a migration whenever stored data changes shape. */
export const LAYOUT_VERSION = 2;

/** One step from layout `from` to `from + 1`, run by `payouts migrate` with every other process stopped. */
export interface LayoutMigration {
  from: number;
  /** What the step changes, in a sentence, printed as it runs. */
  describe: string;
  run(redis: RedisClient, prefix: string): Promise<void>;
}

/** The steps from every earlier layout to {@link LAYOUT_VERSION}, oldest first. */
export const MIGRATIONS: readonly LayoutMigration[] = [
  {
    from: 1,
    describe:
      "the duplicate index moves from a key per payment to day buckets: its keys are deleted, and it is " +
      "rebuilt from the instruction archive at the next submission",
    async run(redis, prefix) {
      await deleteKeys(redis, `${prefix}:dup:p:*`);
      await redis.del(`${prefix}:dup:built`);
    },
  },
];

/** Deletes the keys matching `pattern` on every node that holds keys (all masters of a cluster). */
async function deleteKeys(redis: RedisClient, pattern: string): Promise<void> {
  const nodes = redis instanceof Cluster ? redis.nodes("master") : [redis];
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await node.unlink(...keys);
    } while (cursor !== "0");
  }
}

export function layoutKey(prefix: string): string {
  return `${prefix}:layout`;
}

/** Why a process cannot run against the store's layout, with what to do. */
export class LayoutVersionError extends PayoutsError {
  override readonly name = "LayoutVersionError";
  constructor(
    message: string,
    readonly stored: number,
  ) {
    super("LAYOUT_UNKNOWN", message, { kind: "usage" });
  }
}

/** What a process should do about a store in layout `stored`; undefined when it can run. Pure. */
export function layoutProblem(stored: number, prefix: string, current = LAYOUT_VERSION): string | undefined {
  if (stored === current) return undefined;
  if (stored > current) {
    return (
      `Redis data under the prefix "${prefix}" is in layout ${stored}, written by a newer payouts; ` +
      `this version reads layout ${current}: run the newer version (every process of an installation runs one version)`
    );
  }
  return (
    `Redis data under the prefix "${prefix}" is in layout ${stored}; this version reads layout ${current}: ` +
    "stop every payouts process, then run `payouts migrate`"
  );
}

/** The stored layout, stamping a store that has none with the current one (see the module comment). */
export async function readLayoutVersion(redis: RedisClient, prefix: string): Promise<number> {
  const key = layoutKey(prefix);
  let text = await redis.get(key);
  if (text === null) {
    await redis.set(key, String(LAYOUT_VERSION), "NX");
    text = await redis.get(key);
  }
  const stored = Number(text);
  if (!Number.isSafeInteger(stored) || stored < 1) {
    throw new LayoutVersionError(
      `Redis key ${key} holds "${text}", not a layout version: it was written by something other than payouts; ` +
        "use another REDIS_URL or --redis-prefix",
      0,
    );
  }
  return stored;
}

/** Resolves when the store under `prefix` is in the layout this code reads; a LayoutVersionError if not. */
export async function checkLayoutVersion(redis: RedisClient, prefix: string): Promise<void> {
  const stored = await readLayoutVersion(redis, prefix);
  const problem = layoutProblem(stored, prefix);
  if (problem) throw new LayoutVersionError(problem, stored);
}

/**
 * Moves the store under `prefix` to the current layout, a step at a time, the version written after
 * each step so an interrupted run goes on where it stopped. Returns the steps it ran.
 */
export async function migrateLayout(
  redis: RedisClient,
  prefix: string,
  say: (line: string) => void,
  migrations: readonly LayoutMigration[] = MIGRATIONS,
  current = LAYOUT_VERSION,
): Promise<{ from: number; to: number; steps: number }> {
  const from = await readLayoutVersion(redis, prefix);
  const ahead = layoutProblem(from, prefix, current);
  if (from > current && ahead) throw new LayoutVersionError(ahead, from);
  let at = from;
  let steps = 0;
  while (at < current) {
    const step = migrations.find((m) => m.from === at);
    if (!step) {
      throw new LayoutVersionError(
        `no migration from layout ${at} to ${at + 1} in this version: migrate with the version that followed it first`,
        at,
      );
    }
    say(`layout ${at} -> ${at + 1}: ${step.describe}`);
    await step.run(redis, prefix);
    at += 1;
    await redis.set(layoutKey(prefix), String(at));
    steps += 1;
  }
  return { from, to: at, steps };
}
