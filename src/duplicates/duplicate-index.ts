/**
 * The cross-batch index of what was paid (the I/O half of the duplicate check): for each payment key
 * (paying account, payee, amount, currency: possible-duplicates.ts `paymentKeyOf`) the rows of recent
 * batches that pay it. In Redis, in day buckets (redis/day-buckets.ts) of the day each batch was
 * submitted, so a row costs one short field in a listpack instead of a key of its own:
 *
 *   <p>:dup:d<day>:n                   string  rows recorded that day
 *   <p>:dup:d<day>:<level>:<bucket>    hash    16 hex digits of the payment key → its rows of that day,
 *                                              one line each: `<batchId> TAB <rowNumber> TAB <reference>`
 *   <p>:dup:d<day>:at                  hash    batchId → when it was submitted (ms)
 *   <p>:dup:built                      string  the ISO time the index was last rebuilt from the archive
 *
 * A day's keys expire a day after the window has passed over it. Two payment keys that share their 16
 * hex digits in one bucket would be taken for the same money: a row held for a person, never one
 * paid unseen.
 *
 * Redis is working state (docs/design.md §2): when the marker is missing (Redis lost its data, or the
 * index was never built), the first use rebuilds the index from the instruction archive on disk
 * (DATA_DIR/archive/*.instructions.ndjson of the window) before answering, so losing Redis never
 * hides an earlier payment of the same money.
 */
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { archiveEntries } from "../batches/instruction-archive.js";
import { type PayoutInstruction, rowKeyOf } from "../intake/payout-instruction.js";
import {
  DAY_BUCKET_CONSTANTS,
  DAY_MS,
  dayCountKey,
  dayOf,
  luaScript,
  type RedisClient,
} from "../redis/index.js";
import { type DuplicateMatch, paymentKeyOf } from "./possible-duplicates.js";

/** Rows written or looked up per script call. */
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

/** A line of a field's value, and the way a reference is kept in it (a tab or newline would end it). */
const escapeReference = (reference: string) => reference.replace(/[%\t\n]/g, encodeURIComponent);

/** Where a payment key sits in the buckets: the field (16 hex digits) and the number choosing the bucket. */
function placeOf(paymentKey: string): [field: string, hash: number] {
  return [paymentKey.slice(0, 16), Number.parseInt(paymentKey.slice(16, 24), 16)];
}

/** The index's scripts (./lua/, each file saying its KEYS and ARGV), over day buckets. */
const RECORD = luaScript(new URL("./lua/record-rows.lua", import.meta.url), DAY_BUCKET_CONSTANTS);
const FIND = luaScript(new URL("./lua/find-rows.lua", import.meta.url), DAY_BUCKET_CONSTANTS);

export class DuplicateIndex implements DuplicateLookup {
  private readonly windowMs: number;
  private readonly now: () => number;
  private readonly base: string;
  private built: Promise<unknown> | undefined;

  constructor(private readonly options: DuplicateIndexOptions) {
    if (!(options.windowDays > 0)) throw new RangeError("the duplicate window must be more than 0 days");
    this.windowMs = options.windowDays * DAY_MS;
    this.now = options.now ?? Date.now;
    this.base = `${options.prefix}:dup`;
  }

  private get markerKey(): string {
    return `${this.base}:built`;
  }

  /**
   * Records a batch's rows (idempotent: the same row twice is one entry); a batch older than the
   * window is not recorded. Returns the rows recorded.
   */
  async record(
    batchId: string,
    submittedAt: string | number,
    rows: Iterable<IndexedRow> | AsyncIterable<IndexedRow>,
  ): Promise<number> {
    const at = typeof submittedAt === "number" ? submittedAt : Date.parse(submittedAt);
    if (!Number.isFinite(at) || at <= this.now() - this.windowMs) return 0;
    const day = dayOf(at);
    const keys = [dayCountKey(this.base, day)];
    // The day's keys outlive the window's passing over its last moment by a day.
    const ttl = Math.ceil(((day + 1) * DAY_MS + this.windowMs + DAY_MS - this.now()) / 1000);
    let args: (string | number)[] = [ttl, batchId, at];
    let recorded = 0;
    for await (const row of rows) {
      recorded++;
      const [field, hash] = placeOf(paymentKeyOf(row));
      args.push(field, hash, `${batchId}	${row.rowNumber}	${escapeReference(row.reference ?? "")}`);
      if (args.length >= 3 + CHUNK * 3) {
        await RECORD.run(this.options.redis, keys, args);
        args = [ttl, batchId, at];
      }
    }
    if (args.length > 3) await RECORD.run(this.options.redis, keys, args);
    return recorded;
  }

  async find(paymentKeys: readonly string[]): Promise<Map<string, DuplicateMatch[]>> {
    // The marker is read in the same round trip as the lookup; only when it is missing (Redis lost the
    // index) is the index rebuilt from the archive and the lookup made again.
    const [built, found] = await Promise.all([this.isBuilt(), this.lookUp(paymentKeys)]);
    if (built) return found;
    await this.ensureBuilt();
    return this.lookUp(paymentKeys);
  }

  private async isBuilt(): Promise<boolean> {
    return (await this.options.redis.exists(this.markerKey)) === 1;
  }

  private async lookUp(paymentKeys: readonly string[]): Promise<Map<string, DuplicateMatch[]>> {
    const found = new Map<string, DuplicateMatch[]>();
    const since = this.now() - this.windowMs;
    const today = dayOf(this.now());
    const keys = Array.from({ length: dayOf(this.windowMs) + 2 }, (_, i) =>
      dayCountKey(this.base, today - i),
    );
    for (let i = 0; i < paymentKeys.length; i += CHUNK) {
      const chunk = paymentKeys.slice(i, i + CHUNK);
      const args: (string | number)[] = [since];
      for (const key of chunk) args.push(...placeOf(key));
      const answer = (await FIND.run(this.options.redis, keys, args)) as string[][];
      for (const [k, key] of chunk.entries()) {
        const list = answer[k] ?? [];
        if (list.length > 0) found.set(key, await this.matchesOf(list));
      }
    }
    return found;
  }

  /** The matches of one key from the script's answer: lines, each followed by its batch's time. */
  private async matchesOf(list: readonly string[]): Promise<DuplicateMatch[]> {
    const matches: DuplicateMatch[] = [];
    for (let j = 0; j + 1 < list.length; j += 2) {
      const [batchId = "", row = "", escaped = ""] = list[j]!.split("\t");
      const rowNumber = Number(row);
      const reference = escaped === "" ? undefined : decodeURIComponent(escaped);
      const paymentId = await this.options.paymentIdOf?.(batchId, rowKeyOf(reference, rowNumber));
      matches.push({
        batchId,
        rowNumber,
        reference,
        paymentId,
        at: new Date(Number(list[j + 1])).toISOString(),
      });
    }
    return matches;
  }

  /** Rebuilds the index from the archive when its marker is missing; once per process at a time. */
  async ensureBuilt(): Promise<void> {
    if (await this.isBuilt()) return;
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
