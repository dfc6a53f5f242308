/**
 * Day buckets: many short fields kept per day in small hashes that Redis stores as listpacks (about
 * 12 B and the value a field), where one hashtable per day costs about 70 B a field and a key per
 * field about 200 B. The webhook receiver's memory of messageIds and the duplicate index both keep
 * their days this way.
 *
 * For the day `d` (days since the epoch, UTC) under a name `<base>`:
 *
 *   <base>:d<d>:n                  string  fields recorded that day (chooses the level, below)
 *   <base>:d<d>:<level>:<bucket>   hash    field → value
 *
 * Why levels: a hash stays a listpack only up to `hash-max-listpack-entries` (128 by default) fields,
 * and a bucket key costs ~100 B of its own, so a fixed number of buckets fits only one volume (at
 * 30,000 fields a day, 32,768 buckets would hold one each and cost more than one hashtable; at
 * 3,000,000, 1,024 buckets would each turn into a hashtable). So a day's buckets grow with its count:
 * level k has LEVEL_BUCKETS[k] buckets and takes new fields while the day's count is under
 * LEVEL_BUCKETS[k] × BUCKET_FILL; a field stays where it was recorded, and a lookup checks its bucket
 * at every level the day reached (at most 5). Each level receives about 7/8 of its capacity, ~79
 * fields a bucket on average, so even the fullest of 65,536 buckets (about 4.3 standard deviations
 * above) stays under 128. Past the last level (~5.9 million fields in a day) its buckets grow into
 * hashtables: bigger, never wrong. A value longer than `hash-max-listpack-value` (64 B by default)
 * turns its bucket into a hashtable too, so values are kept short.
 *
 * Cluster: every key one script call touches shares the day keys' names up to their end, so it has
 * the hash tag the key prefix carries in a cluster (`{payouts}`, redis/cluster-nodes.ts): one slot.
 * The bucket keys are derived in the script from the declared count keys (listing every bucket a
 * field might be in would be up to 40 keys a field); Redis allows undeclared keys of the call's own
 * slot.
 */

/** Buckets at each level: ×8 a level, so a day moves up at most 4 times. */
export const LEVEL_BUCKETS = [16, 128, 1024, 8192, 65536] as const;
/** Fields a bucket takes on average before its day moves up a level: well under 128 (see above). */
export const BUCKET_FILL = 90;

export const DAY_MS = 86_400_000;

/** The day number (days since the epoch, UTC) of a time in ms. */
export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** The count key of day `day` under `base`; its buckets' names begin with it, less `:n`. */
export function dayCountKey(base: string, day: number): string {
  return `${base}:d${day}:n`;
}

/**
 * The constants ./lua/day-buckets.lua needs, for a script that includes it (`-- include:` with the
 * path from the script's folder): `level_of(count)`, `bucket(d, k, hash)` and `counts[d]` over KEYS,
 * the days' count keys.
 */
export const DAY_BUCKET_CONSTANTS = { LEVEL_BUCKETS, BUCKET_FILL } as const;
