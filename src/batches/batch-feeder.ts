/**
 * Feeding a batch's payment jobs to the queue a window at a time (Redis per row).
 *
 * A waiting BullMQ job costs about 460 bytes of Redis; a million rows queued at once held ~460 MB of
 * jobs that wait for hours. Instead each batch has a **feed**: a cursor into its order list
 * (redis-layout.ts `order`, the row keys in sheet order) kept in Redis with the batch. A feed hands
 * the rows it passes that are still `queued` to the queue, and moves on only while the queue's
 * backlog (rows in jobs waiting, delayed or paused, of every batch) is under {@link FEED_WINDOW}. A row not
 * handed over yet is simply `queued`, as it always was: counts, status and result files do not change.
 *
 * Money safety does not rest on the feed. A row is handed over BEFORE the cursor moves past it, so a
 * crash in between hands it over again, which is harmless: a job is named by its rows' Idempotency-Keys
 * (the same rows while their job exists are not added twice), a row is only ever sent under its own
 * key, and the payment processor's send fence (FENCE_SEND) sends only for a row still `queued` on that
 * attempt without a payment; a job of rows that moved on does nothing.
 * The cursor only moves by compare-and-set on (cursor, epoch), so it can never skip rows another
 * feed restarted; one lock (SET NX PX) lets one process feed at a time, so two workers do not both
 * add the same jobs (which would be harmless too, only wasted work).
 *
 * Who feeds: the submitter (as rows are recorded, and once at the end), every payment worker (when a
 * job finishes, coalesced, and on a timer as the backstop: src/pipeline/feed-loop.ts), and whoever
 * restarts a feed (an approval, an operator retry, a recovery). A batch awaiting approval has no feed
 * until it is approved (src/approvals), so nothing of it is queued. A paused batch (src/batch-control)
 * keeps its feed but is passed over until it is resumed; a canceled batch leaves the feeding list, and
 * only an operator retry (or an approved correction) of its rows feeds it again.
 */
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { luaScript } from "../redis/index.js";
import { idempotencyKeyFor } from "../row-identity/index.js";
import type { BatchStore } from "./batch-store.js";
import { ROW_CHUNK } from "./batch-store.js";
import type { BatchRecord } from "./types.js";

/**
 * How many rows may wait in the queue's payment jobs at once, across all batches (configurable:
 * PAYOUTS_FEED_WINDOW; the queue's enqueuer counts a waiting job as a full one). 2,000 is about a second of work at the fastest rate seen on one machine
 * (~2,000 creates/s) and 20 times a few workers' concurrency (3 × 32), so workers never run dry
 * between two top-ups, while the jobs cost ~1 MB of Redis whatever the size of the batches.
 */
export const FEED_WINDOW = 2000;

/** A top-up from a finished job waits until this share of the window is free (fewer, larger top-ups). */
const REFILL_FRACTION = 4;

/** The least rows a feed step reads (a small room left must not mean a round trip per row). */
const MIN_PAGE = 100;

/** The feed lock's lifetime: far longer than one top-up (a window is a few pages), short after a crash. */
export const FEED_LOCK_MS = 10_000;

/** One job to add: the job data is only the row's coordinates; the worker reads the rest from Redis. */
export interface RowJobRequest {
  batchId: string;
  rowKey: string;
  attempt: number;
  /** The row's Idempotency-Key of this attempt (requote generation 0). */
  jobId: string;
  /**
   * The row's place in its batch's order list, when the feed knows it: rows are put in jobs by their
   * places, so rows handed over again (a crash, a restarted feed) make the same jobs as the first time.
   */
  position?: number;
}

/** How batches hand rows to the queue (implemented by the pipeline's payment queue). */
export interface RowEnqueuer {
  enqueue(jobs: readonly RowJobRequest[]): Promise<void>;
  /**
   * Rows in jobs added and not started yet (waiting, delayed, prioritized, paused), of every batch:
   * what the feed window counts. A consumer that takes jobs at once (a test's recorder) answers 0.
   */
  backlog(): Promise<number>;
  /** The window for this queue (default {@link FEED_WINDOW}). */
  readonly window?: number | undefined;
}

/** Moves a feed's cursor past the rows handed over, unless the feed changed meanwhile. */
const ADVANCE_FEED = luaScript(new URL("./lua/advance-feed.lua", import.meta.url));

/** Takes a batch off the feeding list, unless its feed changed meanwhile. */
const FINISH_FEED = luaScript(new URL("./lua/finish-feed.lua", import.meta.url));

const RELEASE_LOCK = luaScript(new URL("./lua/release-feed-lock.lua", import.meta.url));

export function jobsFor(
  batch: Pick<BatchRecord, "id" | "entityId">,
  rows: readonly { rowKey: string; attempt: number; position?: number }[],
): RowJobRequest[] {
  return rows.map(({ rowKey, attempt, position }) => ({
    batchId: batch.id,
    rowKey,
    attempt,
    jobId: idempotencyKeyFor({ entityId: batch.entityId, batchId: batch.id, rowKey, attempt }),
    ...(position !== undefined ? { position } : {}),
  }));
}

/**
 * Offers every row of the batch still `queued` (on its current attempt), a page of row keys at a time,
 * whatever the window: the feed's fallback for a batch whose order list does not hold every row (one
 * recorded before the list existed, or a crash between a row's record and its place in the list).
 */
async function offerEveryQueuedRow(
  store: BatchStore,
  enqueuer: RowEnqueuer,
  batch: Pick<BatchRecord, "id" | "entityId">,
): Promise<number> {
  let offered = 0;
  for await (const rowKeys of store.rowKeyPages(batch.id)) {
    const states = await store.rowStates(batch.id, rowKeys);
    const queued: { rowKey: string; attempt: number }[] = [];
    rowKeys.forEach((rowKey, i) => {
      const s = states[i];
      if (s?.state === "queued") queued.push({ rowKey, attempt: s.attempt });
    });
    if (queued.length === 0) continue;
    await enqueuer.enqueue(jobsFor(batch, queued));
    offered += queued.length;
  }
  return offered;
}

export interface TopUpOptions {
  /** Wait this long for the feed lock when another process holds it (default 0: leave it to that one). */
  waitForLockMs?: number;
  /** Top up only when at least this many rows fit (default 1; finished jobs use a quarter window). */
  minRoom?: number;
  /**
   * One pass over the batches being fed, not again while room is left: for a caller a person waits on
   * (a retry, a correction, an approval), which would otherwise feed the whole batch to fast workers
   * before it answers. The workers' feed loop hands over the rest as jobs finish.
   */
  once?: boolean;
}

export class BatchFeeder {
  readonly window: number;

  constructor(
    private readonly store: BatchStore,
    private readonly enqueuer: RowEnqueuer,
  ) {
    this.window = Math.max(1, enqueuer.window ?? FEED_WINDOW);
  }

  /** The room a finished job's top-up waits for. */
  get refillRoom(): number {
    return Math.max(1, Math.floor(this.window / REFILL_FRACTION));
  }

  /**
   * Gives a batch a feed from the start of its order list, unless it has one (a resumed submission
   * carries on where its feed was). With `restart`, an existing feed goes back to the start under a
   * new epoch (an operator retry queued rows the feed had passed; a feed step that read the old
   * cursor cannot move it any more). Never for a batch awaiting approval.
   */
  async startFeed(batchId: string, options: { restart?: boolean } = {}): Promise<void> {
    const { keys, redis } = this.store;
    const tx = redis.multi();
    if (options.restart) tx.hincrby(keys.feed(batchId), "epoch", 1).hset(keys.feed(batchId), "cursor", "0");
    else tx.hsetnx(keys.feed(batchId), "cursor", "0").hsetnx(keys.feed(batchId), "epoch", "0");
    tx.sadd(keys.feeding, batchId);
    for (const [err] of (await tx.exec()) ?? []) if (err) throw err;
  }

  /**
   * Hands queued rows of the batches being fed to the queue until the backlog fills the window (the
   * room shared evenly between batches, oldest id first), while this process holds the feed lock.
   * Repeats while it fed something and room is left. Returns the jobs handed over.
   */
  async topUp(options: TopUpOptions = {}): Promise<number> {
    const minRoom = Math.max(1, options.minRoom ?? 1);
    if (this.window - (await this.enqueuer.backlog()) < minRoom) return 0;
    const token = await this.lock(options.waitForLockMs ?? 0);
    if (token === undefined) return 0;
    try {
      let total = 0;
      for (;;) {
        let room = this.window - (await this.enqueuer.backlog());
        if (room < minRoom) return total;
        const batchIds = (await this.store.redis.smembers(this.store.keys.feeding)).sort();
        let fed = 0;
        for (let i = 0; i < batchIds.length && room > 0; i++) {
          const share = Math.ceil(room / (batchIds.length - i));
          const n = await this.feedBatch(batchIds[i]!, share);
          fed += n;
          room -= n;
        }
        total += fed;
        if (fed === 0 || options.once) return total;
      }
    } finally {
      await RELEASE_LOCK.run(this.store.redis, [this.store.keys.feedLock], [token]);
    }
  }

  private async lock(waitMs: number): Promise<string | undefined> {
    const token = randomBytes(8).toString("hex");
    const deadline = Date.now() + waitMs;
    for (;;) {
      const set = await this.store.redis.set(this.store.keys.feedLock, token, "PX", FEED_LOCK_MS, "NX");
      if (set === "OK") return token;
      if (Date.now() >= deadline) return undefined;
      await sleep(50);
    }
  }

  /**
   * Up to `room` jobs of one batch, a page of its order list at a time (rows that are not `queued` are
   * passed over without using room); each page's jobs are handed over before the cursor moves.
   */
  private async feedBatch(batchId: string, room: number): Promise<number> {
    const { keys, redis } = this.store;
    // A paused batch is not fed; it stays on the feeding list, so a resume carries on. A canceled one
    // (never resumed) is fed only when an operator retry restarts its feed: the send fence holds every
    // row of it but the attempts started after the cancel.
    // What the batch's feed needs is read in one round trip.
    const [[paused, canceled], [cursorText, epochText], batch] = await Promise.all([
      redis.hmget(keys.stop(batchId), "paused", "canceled"),
      redis.hmget(keys.feed(batchId), "cursor", "epoch"),
      this.store.getBatch(batchId),
    ]);
    if (paused && !canceled) return 0;
    const epoch = epochText ?? "0";
    if (cursorText === null || !batch) {
      // No feed or no batch any more (Redis lost them): `payouts recover` rebuilds and feeds it again.
      await redis.srem(keys.feeding, batchId);
      return 0;
    }
    let cursor = Number(cursorText);
    let fed = 0;
    while (fed < room) {
      // A page about the size of the room left (rows passed over read more pages), so a top-up reads
      // about one row state per job it adds.
      const page = Math.min(ROW_CHUNK, Math.max(MIN_PAGE, room - fed));
      const rowKeys = await redis.lrange(keys.order(batchId), cursor, cursor + page - 1);
      if (rowKeys.length === 0) {
        await this.finish(batch, cursor, epoch);
        return fed;
      }
      const states = await this.store.rowStates(batchId, rowKeys);
      const queued: { rowKey: string; attempt: number; position: number }[] = [];
      let passed = 0;
      for (const [i, rowKey] of rowKeys.entries()) {
        if (fed + queued.length >= room) break;
        const s = states[i];
        // Listed but not recorded yet (its submission is still recording): stop here, come back later.
        // Once every row is recorded, a missing row is one Redis lost; `payouts recover` rebuilds it.
        if (!s && !batch.rowsRecorded) break;
        if (s?.state === "queued") queued.push({ rowKey, attempt: s.attempt, position: cursor + i });
        passed = i + 1;
      }
      // Handed over first, then the cursor moves: a crash in between only hands them over again.
      if (queued.length > 0) await this.enqueuer.enqueue(jobsFor(batch, queued));
      if (passed === 0) return fed;
      const moved = await ADVANCE_FEED.run(
        redis,
        [keys.feed(batchId)],
        [String(cursor), epoch, String(cursor + passed)],
      );
      // Another feed moved or restarted it meanwhile: it carries on from there (the jobs handed over
      // count, so the caller's next round reads the feed again).
      if (Number(moved) !== 1) return fed + queued.length;
      cursor += passed;
      fed += queued.length;
      if (passed < rowKeys.length) return fed;
    }
    return fed;
  }

  /**
   * At the end of the order list: a batch whose rows are all recorded is taken off the feeding list.
   * If its list does not hold every row, the rows it misses are found by offering every queued row.
   */
  private async finish(batch: BatchRecord, cursor: number, epoch: string): Promise<void> {
    const { keys, redis } = this.store;
    const batchId = batch.id;
    if (!batch.rowsRecorded) return;
    const [listed, recorded] = await Promise.all([
      redis.llen(keys.order(batchId)),
      redis.hlen(keys.rows(batchId)),
    ]);
    if (cursor < listed) return;
    if (listed !== recorded) await offerEveryQueuedRow(this.store, this.enqueuer, batch);
    await FINISH_FEED.run(redis, [keys.feed(batchId), keys.feeding], [String(cursor), epoch, batchId]);
  }
}

/**
 * Queues the batch's rows that are `queued` (on their current attempt) through its feed, restarted
 * from the start of its order list: what an approval, an operator retry and a recovery call. Hands
 * over the first window at once (waiting briefly for another feeding process); the feeders of the
 * workers hand over the rest as jobs finish. Returns the batch's rows `queued` when it was called.
 */
export async function enqueueQueuedRows(
  store: BatchStore,
  enqueuer: RowEnqueuer,
  batch: Pick<BatchRecord, "id" | "entityId">,
): Promise<number> {
  // Counted before the feed starts: once it does, a worker may pay a row before this call returns.
  const queued = await queuedRowCount(store, batch.id);
  const feeder = new BatchFeeder(store, enqueuer);
  await feeder.startFeed(batch.id, { restart: true });
  await feeder.topUp({ waitForLockMs: FEED_LOCK_WAIT_MS, once: true });
  return queued;
}

/** The batch's rows `queued` now (its per-state counter). */
export async function queuedRowCount(store: BatchStore, batchId: string): Promise<number> {
  return Number((await store.redis.hget(store.keys.counts(batchId), "queued")) ?? 0);
}

/** How long a caller that just started a feed waits for another process's top-up to end. */
export const FEED_LOCK_WAIT_MS = 5_000;
