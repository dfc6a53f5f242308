/**
 * The webhook receiver's memory of the messageIds it has seen (docs/design.md §3.5: deduplicate on
 * `messageId`, kept at least the TTL). Each id is one field in a small hash that Redis keeps as a
 * listpack (about 12 B an id), instead of a field in one big hashtable per day (about 70 B an id;
 * a payment gets about three deliveries).
 *
 * Layout, for the day `d` (days since the epoch, UTC) an id was first seen on:
 *
 *   <p>:webhooks:seen:d<d>:n                 string  ids recorded that day (chooses the level, below)
 *   <p>:webhooks:seen:d<d>:<level>:<bucket>  hash    8-byte digest of the messageId → "1"
 *
 * Why levels: a hash stays a listpack only up to `hash-max-listpack-entries` (128 by default) fields,
 * and a bucket key costs ~100 B of its own, so a fixed number of buckets fits only one volume (at
 * 30,000 ids a day, 32,768 buckets would hold one id each and cost more than one hashtable; at
 * 3,000,000, 1,024 buckets would each turn into a hashtable). So a day's buckets grow with its count:
 * level k has LEVEL_BUCKETS[k] buckets and takes new ids while the day's count is under
 * LEVEL_BUCKETS[k] × BUCKET_FILL; an id stays where it was recorded, and a lookup checks its bucket
 * at every level the day reached (at most 5). Each level receives about 7/8 of its capacity, ~79 ids
 * a bucket on average, so even the fullest of 65,536 buckets (about 4.3 standard deviations above)
 * stays under 128. Past the last level (~5.9 million ids in a day) its buckets grow into hashtables:
 * bigger, never wrong.
 *
 * Cluster: every key one script call touches shares the day keys' names up to their end, so it has
 * the hash tag the key prefix carries in a cluster (`{payouts}`, redis/cluster-nodes.ts): one slot.
 * The bucket keys are derived in the script from the declared count keys (listing every bucket an id
 * might be in would be up to 40 keys an id); Redis allows undeclared keys of the call's own slot.
 */
import { hash } from "node:crypto";
import { luaScript, type RedisClient } from "../redis/index.js";

/** Buckets at each level: ×8 a level, so a day moves up at most 4 times. */
export const LEVEL_BUCKETS = [16, 128, 1024, 8192, 65536] as const;
/** Ids a bucket takes on average before its day moves up a level: well under 128 (see above). */
export const BUCKET_FILL = 90;

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

/** The store's scripts (./lua/, each file saying its KEYS and ARGV), with the levels from above. */
const LEVELS = { LEVEL_BUCKETS, BUCKET_FILL };
const SEEN_FIRST = luaScript(new URL("./lua/seen-first.lua", import.meta.url), LEVELS);
const FORGET = luaScript(new URL("./lua/forget-seen.lua", import.meta.url), LEVELS);

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
