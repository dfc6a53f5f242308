/**
 * The cross-batch index of what was paid (the I/O half of the duplicate check): for each payment key
 * (paying account, payee, amount, currency: possible-duplicates.ts `paymentKeyOf`) the rows of recent
 * batches that pay it. In Redis, one sorted set per key, scored by the batch's submission time and
 * expiring a day after the window; trimmed of older members on every write.
 *
 *   <p>:dup:p:<paymentKey>   sorted set   JSON [batchId, rowNumber, rowKey, reference|null] by ms
 *   <p>:dup:built            string       the ISO time the index was last rebuilt from the archive
 *
 * Redis is working state (docs/design.md §2): when the marker is missing (Redis lost its data, or the
 * index was never built), the first use rebuilds the index from the instruction archive on disk
 * (DATA_DIR/archive/*.instructions.ndjson of the window) before answering, so losing Redis never
 * hides an earlier payment of the same money.
 */
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { archiveEntries } from "../batches/instruction-archive.js";
import type { PayoutInstruction } from "../intake/payout-instruction.js";
import type { RedisClient } from "../redis/index.js";
import { type DuplicateMatch, paymentKeyOf } from "./possible-duplicates.js";

const DAY_MS = 86_400_000;
/** Keys written or read per round trip. */
const CHUNK = 500;

/** What validation asks the index: the earlier rows of each payment key (keys not found are absent). */
export interface DuplicateLookup {
  find(paymentKeys: readonly string[]): Promise<Map<string, DuplicateMatch[]>>;
}

export interface DuplicateIndexOptions {
  redis: RedisClient;
  prefix: string;
  /** The window in days (> 0): rows of batches older than this are not duplicates any more. */
  windowDays: number;
  /** Where the instruction archive lives (`DATA_DIR`), for the rebuild. */
  dataDir: string;
  /** The payment of an earlier row, when its batch still knows it. */
  paymentIdOf?: (batchId: string, rowKey: string) => Promise<string | undefined>;
  now?: () => number;
}

/** A row of a recorded batch, as the index keeps it. */
export type IndexedRow = Pick<
  PayoutInstruction,
  "rowNumber" | "rowKey" | "reference" | "originatingAccountId" | "receivingAccountId" | "amount" | "currency"
>;

type Member = [batchId: string, rowNumber: number, rowKey: string, reference: string | null];

export class DuplicateIndex implements DuplicateLookup {
  private readonly windowMs: number;
  private readonly now: () => number;
  private built: Promise<unknown> | undefined;

  constructor(private readonly options: DuplicateIndexOptions) {
    if (!(options.windowDays > 0)) throw new RangeError("the duplicate window must be more than 0 days");
    this.windowMs = options.windowDays * DAY_MS;
    this.now = options.now ?? Date.now;
  }

  private keyOf(paymentKey: string): string {
    return `${this.options.prefix}:dup:p:${paymentKey}`;
  }

  private get markerKey(): string {
    return `${this.options.prefix}:dup:built`;
  }

  /**
   * Records a batch's rows (idempotent: the same row twice is one member); a batch older than the
   * window is not recorded. Returns the rows recorded.
   */
  async record(
    batchId: string,
    submittedAt: string | number,
    rows: Iterable<IndexedRow> | AsyncIterable<IndexedRow>,
  ): Promise<number> {
    const at = typeof submittedAt === "number" ? submittedAt : Date.parse(submittedAt);
    if (!Number.isFinite(at) || at <= this.now() - this.windowMs) return 0;
    const ttlSeconds = Math.ceil((at + this.windowMs + DAY_MS - this.now()) / 1000);
    let pipeline = this.options.redis.pipeline();
    let queued = 0;
    let recorded = 0;
    for await (const row of rows) {
      recorded++;
      const key = this.keyOf(paymentKeyOf(row));
      const member: Member = [batchId, row.rowNumber, row.rowKey, row.reference ?? null];
      pipeline.zadd(key, at, JSON.stringify(member));
      pipeline.zremrangebyscore(key, "-inf", this.now() - this.windowMs);
      // Never shorten a key's life: a newer batch may have set a longer one.
      pipeline.expire(key, ttlSeconds, "GT");
      pipeline.expire(key, ttlSeconds, "NX");
      if (++queued >= CHUNK) {
        await pipeline.exec();
        pipeline = this.options.redis.pipeline();
        queued = 0;
      }
    }
    if (queued > 0) await pipeline.exec();
    return recorded;
  }

  async find(paymentKeys: readonly string[]): Promise<Map<string, DuplicateMatch[]>> {
    await this.ensureBuilt();
    const found = new Map<string, DuplicateMatch[]>();
    const since = this.now() - this.windowMs;
    for (let i = 0; i < paymentKeys.length; i += CHUNK) {
      const chunk = paymentKeys.slice(i, i + CHUNK);
      const pipeline = this.options.redis.pipeline();
      for (const key of chunk) pipeline.zrangebyscore(this.keyOf(key), `(${since}`, "+inf", "WITHSCORES");
      const answers = (await pipeline.exec()) ?? [];
      for (const [k, key] of chunk.entries()) {
        const [err, list] = answers[k] ?? [null, []];
        if (err) throw err;
        const matches = await this.matchesOf(list as string[]);
        if (matches.length > 0) found.set(key, matches);
      }
    }
    return found;
  }

  private async matchesOf(list: readonly string[]): Promise<DuplicateMatch[]> {
    const matches: DuplicateMatch[] = [];
    for (let j = 0; j + 1 < list.length; j += 2) {
      const [batchId, rowNumber, rowKey, reference] = JSON.parse(list[j]!) as Member;
      const paymentId = await this.options.paymentIdOf?.(batchId, rowKey);
      matches.push({
        batchId,
        rowNumber,
        reference: reference ?? undefined,
        paymentId,
        at: new Date(Number(list[j + 1])).toISOString(),
      });
    }
    return matches;
  }

  /** Rebuilds the index from the archive when its marker is missing; once per process at a time. */
  async ensureBuilt(): Promise<void> {
    if ((await this.options.redis.exists(this.markerKey)) === 1) return;
    this.built ??= this.rebuild().finally(() => {
      this.built = undefined;
    });
    await this.built;
  }

  /**
   * Records every archived batch submitted within the window (its rows with corrections applied),
   * then sets the marker. Safe to run twice at once: recording is idempotent.
   */
  async rebuild(): Promise<{ batches: number; rows: number }> {
    const dir = path.join(this.options.dataDir, "archive");
    const since = this.now() - this.windowMs;
    let names: string[] = [];
    try {
      names = (await readdir(dir)).filter((n) => n.endsWith(".instructions.ndjson"));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    let batches = 0;
    let rows = 0;
    for (const name of names) {
      const file = path.join(dir, name);
      // A file not written since the window began holds no batch submitted within it.
      if ((await stat(file)).mtimeMs <= since) continue;
      const counted = await this.recordArchive(file);
      if (counted > 0) batches++;
      rows += counted;
    }
    await this.options.redis.set(this.markerKey, new Date(this.now()).toISOString());
    return { batches, rows };
  }

  private async recordArchive(file: string): Promise<number> {
    let batch: { id: string; createdAt: string } | undefined;
    let pending: IndexedRow[] = [];
    let rows = 0;
    for await (const entry of archiveEntries(file)) {
      if (entry.kind === "batch") batch = entry.batch;
      else if (entry.kind === "row" && batch) {
        pending.push(entry.instruction);
        if (pending.length >= CHUNK) {
          rows += await this.record(batch.id, batch.createdAt, pending);
          pending = [];
        }
      }
    }
    if (batch && pending.length > 0) rows += await this.record(batch.id, batch.createdAt, pending);
    return rows;
  }
}
