/**
 * Where the batch pipeline keeps its working state in Redis. Every key starts with the store's
 * prefix, so tests (and several installations) can share one Redis without seeing each other.
 *
 *   <p>:batch:<id>                  hash   the batch record
 *   <p>:batches                     zset   batch ids by creation time (ms)
 *   <p>:batches:incomplete          set    `awaitingEnqueue`: batches whose rows are not all recorded and enqueued
 *   <p>:batches:unfinished          set    `awaitingOutcomes`: batches with a row not terminal yet (the sweep's list)
 *   <p>:file-sha256:<hex>           string batch id of a file's content (DUPLICATE_FILE)
 *   <p>:batch:<id>:rows             hash   row key → the row's static record (static-row.ts; written once)
 *   <p>:batch:<id>:invalid          hash   row number → JSON {source, problems}
 *   <p>:batch:<id>:row:<rowKey>     hash   the row's mutable state (state, attempt, payment, quote, history)
 *   <p>:batch:<id>:counts           hash   state → number of rows
 *   <p>:batch:<id>:totals           hash   "<state>|<currency>" → sum of amounts (minor units)
 *   <p>:batch:<id>:attachments      hash   file path → att_ id (uploaded once per batch)
 *   <p>:batch:<id>:order            list   row keys in sheet order (result files stream by it)
 *   <p>:batch:<id>:open             zset   row key → last touch (ms) of rows with a payment not final yet
 *   <p>:batch:<id>:feed             hash   the batch's feed (batch-feeder.ts): `cursor` into `order`, `epoch`
 *   <p>:batch:<id>:stop             hash   an operator's (or the breaker's) pause and cancel: who, when, why (src/batch-control)
 *   <p>:batch:<id>:breaker          hash   the circuit breaker's counters: the last refusal code, its run, the last outcomes
 *   <p>:batches:feeding             set    batches whose feed has rows left to hand to the queue
 *   <p>:feed-lock                   string token of the one process feeding right now (SET NX PX)
 *   <p>:batch:<id>:created-per-s    hash   second of a payment's creation (service clock) → payments of the batch's rows created in it
 *   <p>:batch:<id>:looks            zset   rows needing a look at their payment (reconcile): row metadata value → last mark (Redis time, ms)
 *   <p>:batch:<id>:look-hints       hash   the same rows → `<attempt>|<occurredAt ms>|<payment id>` of the last delivery naming them
 *   <p>:reconcile:due               zset   batches with rows to look at → earliest mark (ms); a reconciler's claim pushes it ahead
 *   <p>:reconcile:loose             zset   payment ids to look at that name no row (a hint without metadata) → mark (ms)
 *   <p>:batches:watched             zset   finished batches still watched for returns → next look (ms)
 *   <p>:layout                      string the layout version of everything under the prefix (src/redis/layout-version.ts)
 *
 * (The two sets' key names predate their roles; renaming them would be a new layout, see
 * src/redis/layout-version.ts.)
 *
 * On a Redis Cluster the prefix is a hash tag (src/redis/cluster-nodes.ts), so every key above, and
 * the queues under `<p>:bull`, live in one slot: a script may touch any of them.
 *
 * One static hash plus one small hash per row keeps 100k rows compact and lets a state change be
 * one atomic script over three keys.
 */
export const DEFAULT_KEY_PREFIX = "payouts";

export function redisLayout(prefix: string = DEFAULT_KEY_PREFIX) {
  const batch = (id: string) => `${prefix}:batch:${id}`;
  const rowPrefix = (id: string) => `${batch(id)}:row:`;
  return {
    prefix,
    batch,
    batches: `${prefix}:batches`,
    awaitingEnqueue: `${prefix}:batches:incomplete`,
    awaitingOutcomes: `${prefix}:batches:unfinished`,
    fileIndex: (sha256: string) => `${prefix}:file-sha256:${sha256}`,
    rows: (id: string) => `${batch(id)}:rows`,
    invalid: (id: string) => `${batch(id)}:invalid`,
    row: (id: string, rowKey: string) => `${rowPrefix(id)}${rowKey}`,
    /** What a row's key follows, for scripts that read many rows by their keys. */
    rowPrefix,
    counts: (id: string) => `${batch(id)}:counts`,
    totals: (id: string) => `${batch(id)}:totals`,
    attachments: (id: string) => `${batch(id)}:attachments`,
    open: (id: string) => `${batch(id)}:open`,
    order: (id: string) => `${batch(id)}:order`,
    feed: (id: string) => `${batch(id)}:feed`,
    stop: (id: string) => `${batch(id)}:stop`,
    breaker: (id: string) => `${batch(id)}:breaker`,
    feeding: `${prefix}:batches:feeding`,
    feedLock: `${prefix}:feed-lock`,
    createdPerSecond: (id: string) => `${batch(id)}:created-per-s`,
    looks: (id: string) => `${batch(id)}:looks`,
    lookHints: (id: string) => `${batch(id)}:look-hints`,
    lookDue: `${prefix}:reconcile:due`,
    looseLooks: `${prefix}:reconcile:loose`,
    watched: `${prefix}:batches:watched`,
  };
}

export type RedisLayout = ReturnType<typeof redisLayout>;
