/**
 * The cross-batch index of what was paid (the I/O half of the duplicate check): for each payment key
 * (paying account, payee, amount, currency: possible-duplicates.ts `paymentKeyOf`) the rows of recent
 * batches that pay it. In Redis, in day buckets (redis/day-buckets.ts) of the day each batch was
 * submitted, so a row costs one short field in a listpack instead of a key of its own:
 *
 *   <p>:dup:d<day>:n                   string  rows recorded that day
 *   <p>:dup:d<day>:<level>:<bucket>    hash    16 hex digits of the payment key → its rows of that day,
 *                                              one line each: `<batchId> TAB <rowNumber> TAB <reference>`
 *   <p>:dup:d<day>:at                  hash    batchId → when it was submitted (ms); a line counts only
 *                                              while its batch is here, so a sheet that did not become
 *                                              its batch is taken back by one HDEL
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

/** A valid row of a sheet being validated, with its payment key (computed once, by the sheet's pass). */
export interface LookedUpRow {
  row: IndexedRow;
  paymentKey: string;
  /** An earlier row of the same sheet pays the same. */
  earlierInSheet: boolean;
}

/** What validation asks the index: the rows of recent batches that pay what each row pays, by payment key. */
export interface DuplicateLookup {
  matches(rows: readonly LookedUpRow[]): Promise<Map<string, DuplicateMatch[]>>;
}

/** A lookup that records the rows it is asked about under the batch the sheet is about to become. */
export interface DuplicateClaim extends DuplicateLookup {
  /** Hides the claimed rows again: the sheet did not become this batch (refused, a dry run, resumed). */
  release(): Promise<void>;
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
const CLAIM = luaScript(new URL("./lua/claim-rows.lua", import.meta.url), DAY_BUCKET_CONSTANTS);

/** A row's line in a field's value. */
const lineOf = (batchId: string, row: IndexedRow) =>
  `${batchId}\t${row.rowNumber}\t${escapeReference(row.reference ?? "")}`;

export class DuplicateIndex {
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
    const ttl = this.ttlOf(day);
    let args: (string | number)[] = [ttl, batchId, at];
    let recorded = 0;
    for await (const row of rows) {
      recorded++;
      const [field, hash] = placeOf(paymentKeyOf(row));
      args.push(field, hash, lineOf(batchId, row));
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
    const keys = this.windowKeys();
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

  /**
   * The lookup of a sheet about to become batch `batchId`: each chunk of rows is looked up and recorded
   * in one script, so of two sheets paying the same money taken at once the later one sees the
   * earlier's rows. A row is recorded when it is to be paid as it stands (nothing else pays the same,
   * or `confirmed`: a person confirmed possible duplicates). Its time in the index is the claim's.
   */
  claimFor(batchId: string, confirmed: boolean): DuplicateClaim {
    const at = this.now();
    const dayKey = dayCountKey(this.base, dayOf(at));
    return {
      matches: async (rows) => {
        const found = new Map<string, DuplicateMatch[]>();
        const matches = await this.claim({ batchId, at, confirmed, own: "batch" }, rows);
        for (const [i, { paymentKey }] of rows.entries()) {
          if (matches[i]?.length) found.set(paymentKey, matches[i]);
        }
        return found;
      },
      release: async () => {
        await this.options.redis.hdel(`${dayKey.slice(0, -2)}:at`, batchId);
      },
    };
  }

  /**
   * Corrected rows of batch `batchId` (submitted `submittedAt`), looked up and recorded in one script
   * like a sheet's ({@link claimFor}), each leaving out only itself: the batch's other rows count.
   * Recorded under the batch's day and time, or now for a batch older than the window (the corrected
   * payment is made now). Returns each row's matches, in the rows' order.
   */
  claimCorrections(
    batchId: string,
    submittedAt: string,
    rows: readonly LookedUpRow[],
    confirmed: boolean,
  ): Promise<DuplicateMatch[][]> {
    const submitted = Date.parse(submittedAt);
    const at = submitted > this.now() - this.windowMs ? submitted : this.now();
    return this.claim({ batchId, at, confirmed, own: "row" }, rows);
  }

  private async claim(
    how: { batchId: string; at: number; confirmed: boolean; own: "batch" | "row" },
    rows: readonly LookedUpRow[],
  ): Promise<DuplicateMatch[][]> {
    // As find: the marker is read beside the claim, and after a rebuild the rows are claimed again (a
    // row is never recorded twice, and its own batch's rows are never its matches). A row the first
    // claim recorded stays recorded even if the rebuilt index now holds its money: after a Redis loss a
    // later sheet may be held for a person once too often, never paid unseen.
    const [built, found] = await Promise.all([this.isBuilt(), this.claimChunks(how, rows)]);
    if (built) return found;
    await this.ensureBuilt();
    return this.claimChunks(how, rows);
  }

  private async claimChunks(
    how: { batchId: string; at: number; confirmed: boolean; own: "batch" | "row" },
    rows: readonly LookedUpRow[],
  ): Promise<DuplicateMatch[][]> {
    const found: DuplicateMatch[][] = [];
    const day = dayOf(how.at);
    const dayKey = dayCountKey(this.base, day);
    const keys = [dayKey, ...this.windowKeys().filter((k) => k !== dayKey)];
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK);
      const args: (string | number)[] = [
        this.now() - this.windowMs,
        this.ttlOf(day),
        how.batchId,
        how.at,
        how.confirmed ? 1 : 0,
        how.own,
      ];
      for (const { row, paymentKey, earlierInSheet } of chunk) {
        args.push(...placeOf(paymentKey), lineOf(how.batchId, row), earlierInSheet ? 1 : 0);
      }
      const answer = (await CLAIM.run(this.options.redis, keys, args)) as string[][];
      for (const k of chunk.keys()) found.push(await this.matchesOf(answer[k] ?? []));
    }
    return found;
  }

  /** The count keys of the window's days, newest first. */
  private windowKeys(): string[] {
    const today = dayOf(this.now());
    return Array.from({ length: dayOf(this.windowMs) + 2 }, (_, i) => dayCountKey(this.base, today - i));
  }

  /** How long a day's keys live on (s): a day past the window's passing over the day's last moment. */
  private ttlOf(day: number): number {
    return Math.ceil(((day + 1) * DAY_MS + this.windowMs + DAY_MS - this.now()) / 1000);
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
