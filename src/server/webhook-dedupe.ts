/**
 * The webhook receiver's memory of the messageIds it has seen (docs/design.md §3.5: deduplicate on
 * `messageId`, kept at least the TTL). Each id is one field in a small hash that Redis keeps as a
 * listpack (about 12 B an id), instead of a field in one big hashtable per day (about 70 B an id;
 * a payment gets two or three deliveries).
 *
 * Layout, for the day `d` (days since the epoch, UTC) an id was first seen on:
 *
 *   <p>:webhooks:seen:d<d>:n                 string  ids recorded that day (chooses the level, below)
 *   <p>:webhooks:seen:d<d>:<level>:<bucket>  hash    8-byte digest of the messageId → "1"
 *
 * The buckets are day buckets (src/redis/day-buckets.ts: why a day's buckets grow in levels, and
 * why one script call stays in one cluster slot).
 */
import { hash } from "node:crypto";
import { DAY_BUCKET_CONSTANTS, luaScript, type RedisClient } from "../redis/index.js";

const DAY_SECONDS = 86_400;

/**
 * What the store keeps of a messageId. The field is the first 8 bytes (64 bits) of its SHA-256: two
 * different ids with the same field in the same bucket would make the second taken for a duplicate
 * (its delivery dropped; the sweep would still reconcile its row later). The bucket comes from 4
 * other bytes, so ids collide only when 64 + (4 to 16) bits agree: with n ids within the TTL the odds
 * of any collision are below n² / 2^69, about 1 in 10^6 for 24 million ids (3 million a day for 8
 * days) and 1 in 10^10 at 10,000 payments a day.
 */
export interface DedupeId {
  digest: Buffer;
  /** An unsigned 32-bit number; the bucket at a level is it modulo the level's bucket count. */
  hash: number;
}

export function dedupeId(messageId: string): DedupeId {
  // The one-shot hash: about half the time of a Hash object, on every delivery.
  const sha = hash("sha256", messageId, "buffer");
  return { digest: sha.subarray(0, 8), hash: sha.readUInt32BE(8) };
}

/**
 * The days whose keys may hold an id seen within `ttl` seconds of `nowMs`, today first: the key of
 * each day's count (its buckets' names begin with it, less `:n`); and when today's keys expire (the
 * TTL after the day ends, unix s).
 */
export function dedupeDays(
  prefix: string,
  nowMs: number,
  ttl: number,
): { counts: string[]; expireAt: number } {
  const today = Math.floor(nowMs / 1000 / DAY_SECONDS);
  const back = Math.ceil(ttl / DAY_SECONDS);
  const counts = Array.from({ length: back + 1 }, (_, i) => `${prefix}:webhooks:seen:d${today - i}:n`);
  return { counts, expireAt: (today + 1) * DAY_SECONDS + ttl };
}

/** The store's scripts (./lua/, each file saying its KEYS and ARGV), over day buckets. */
const SEEN_FIRST = luaScript(new URL("./lua/seen-first.lua", import.meta.url), DAY_BUCKET_CONSTANTS);
const FORGET = luaScript(new URL("./lua/forget-seen.lua", import.meta.url), DAY_BUCKET_CONSTANTS);

export function createDedupeStore(redis: RedisClient, prefix: string, ttl: number) {
  return {
    /** One answer per id, in order: true when the id was not seen within the TTL (it is now). */
    async seenFirst(ids: readonly DedupeId[]): Promise<boolean[]> {
      const days = dedupeDays(prefix, Date.now(), ttl);
      const args: (string | number | Buffer)[] = [days.expireAt];
      for (const id of ids) args.push(id.digest, id.hash);
      const answer = (await SEEN_FIRST.run(redis, days.counts, args)) as number[];
      return ids.map((_, i) => Number(answer[i]) === 1);
    },
    /**
     * Forgets an id recorded by {@link seenFirst}: in today's buckets, or yesterday's if it was recorded
     * before midnight.
     */
    async forget(id: DedupeId): Promise<void> {
      const days = dedupeDays(prefix, Date.now(), ttl);
      await FORGET.run(redis, days.counts.slice(0, 2), [id.digest, id.hash]);
    },
  };
}

export type DedupeStore = ReturnType<typeof createDedupeStore>;
