/**
 * The batch and row records in Redis (layout in redis-layout.ts). Reads are plain commands; every row
 * change goes through one of the Lua scripts in lua/, so it is atomic and forward-only.
 * Bulk writes go in chunks through pipelines so 100k rows stay fast and bounded in memory.
 */

import type { PayoutInstruction } from "../intake/payout-instruction.js";
import type { Fee } from "../payouts-api/wire-types.js";
import type { RedisClient } from "../redis/index.js";
import { DEFAULT_KEY_PREFIX, type RedisLayout, redisLayout } from "./redis-layout.js";
import {
  FENCE_SEND,
  INIT_ROWS,
  READ_ROWS,
  RECORD_STATIC_ROWS,
  START_NEW_ATTEMPT,
  TRANSITION_ROW,
} from "./redis-scripts.js";
import {
  decodeFees,
  decodeNote,
  encodeFees,
  encodeNote,
  encodePaymentTime,
  isoOfStamp,
  rowStamp,
} from "./row-fields.js";
import { isRowState, ROW_STATES, type RowState, TERMINAL_ROW_STATES } from "./row-state.js";
import { decodeStaticRow, encodeStaticRow, type StaticRow } from "./static-row.js";
import type {
  AuditedRow,
  BatchProgress,
  BatchRecord,
  InvalidRowInput,
  InvalidRowProblem,
  LedgerCheck,
  RowHead,
  RowHistoryEntry,
  RowOutcome,
  RowRecord,
  SheetLayout,
  SourceValues,
  StoredFxQuote,
  SubmittedInstruction,
} from "./types.js";

/** Batches whose column keys a store keeps in memory (see BatchStore.sourceKeys). */
const SOURCE_KEYS_KEPT = 1000;

/** Rows written per pipeline / script call. */
export const ROW_CHUNK = 1000;

export interface BatchStoreOptions {
  /** Key prefix (default `payouts`). Tests use a unique prefix each. */
  prefix?: string;
  /** Clock, for history timestamps. */
  now?: () => Date;
}

/** Fields of a row a caller may set with a change (an `undefined` leaves it, `null` deletes it). */
export interface RowFieldChanges {
  paymentId?: string | null;
  paymentStatus?: string | null;
  debitUsd?: number | null;
  fxRate?: number | null;
  /** The payment's fees (stored as JSON). */
  fees?: Fee[] | null;
  /**
   * The payment's `updatedAt`, normalised with `toISOString()` so that text order is time order. A
   * change carrying an older value than the row holds is refused whole, as `outdated`.
   */
  paymentUpdatedAt?: string | null;
  /**
   * The payment's `createdAt` (normalised with `toISOString()`): where the payment sits in the
   * service's newest-first lists, so the reconciler can read it in a page by creation time.
   */
  paymentCreatedAt?: string | null;
  quote?: StoredFxQuote | null;
  requoteGeneration?: number;
  sentBodyHash?: string | null;
  sentGeneration?: number | null;
  errorCode?: string | null;
  errorMessage?: string | null;
}

/** Fields a change can be made conditional on (see {@link RowChange.expect}). */
export type ExpectableField =
  | "quote"
  | "requoteGeneration"
  | "sentBodyHash"
  | "sentGeneration"
  | "sentAttempt";

export interface RowChange {
  /** Applies only while the row is still on this attempt (a job of an older attempt must not touch it). */
  expectedAttempt?: number;
  /**
   * Applies only while these fields still hold what the caller read (`null`: absent); else the change
   * is refused whole as `changed`. How a run makes the writes that shape its request body (quote, body
   * hash, requote generation) conditional on the row it read, so two runs of one job cannot both write
   * them.
   */
  expect?: Partial<Record<ExpectableField, string | number | StoredFxQuote | null | undefined>>;
  /** New state (forward only); omit to change fields only (refused on a terminal row). */
  to?: RowState;
  fields?: RowFieldChanges;
  /** Recorded in the row's history. */
  note?: string;
}

export type RowChangeOutcome =
  | "ok"
  | "missing"
  | "stale"
  | "terminal"
  | "refused"
  | "outdated"
  | "changed"
  | "in-doubt";

/** What the send fence answers (see FENCE_SEND): `ok`, or why this run must not send. */
export type SendFenceOutcome =
  | "ok"
  | "missing"
  | "stale"
  | "done"
  | "requoted"
  | "body-changed"
  | "paused"
  | "lock-lost";

export interface SendFence {
  attempt: number;
  requoteGeneration: number;
  /** The hash of the body about to be sent, when the row records one for it (FX, uploaded files). */
  bodyHash?: string | undefined;
  /** The run's BullMQ job lock: its Redis key and the token the run holds. */
  lock?: { key: string; token: string } | undefined;
  /** The send time recorded on the row (ms). */
  now: number;
  /** Until when (ms) the request may still reach the service (its time-outs and a margin). */
  inDoubtUntil: number;
}

export interface RowChangeResult {
  outcome: RowChangeOutcome;
  /** The state before the change (empty when the row is missing). */
  previous: RowState | undefined;
  attempt: number | undefined;
}

/** One invalid row as stored for the result file. */
export interface InvalidRowRecord {
  rowNumber: number;
  source: SourceValues | undefined;
  problems: InvalidRowProblem[];
}

function encodeField(value: string | number | StoredFxQuote | Fee[] | null): string {
  if (value === null) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** A field of a change as the row hash stores it: fees and the payment's time compact (row-fields.ts). */
function encodeRowField(field: string, value: string | number | StoredFxQuote | Fee[] | null): string {
  if (field === "fees" && Array.isArray(value)) return encodeFees(value);
  if ((field === "paymentUpdatedAt" || field === "paymentCreatedAt") && typeof value === "string")
    return encodePaymentTime(value);
  return encodeField(value);
}

function msArg(ms: number | undefined): string {
  return ms === undefined ? "" : String(Math.floor(ms));
}

/** The fields of a row's state hash that its result line shows (outcomeFrom). */
const OUTCOME_FIELDS = [
  "state",
  "attempt",
  "requoteGeneration",
  "paymentId",
  "paymentStatus",
  "debitUsd",
  "fxRate",
  "errorCode",
  "errorMessage",
  "updatedAt",
] as const;

/** What reconciliation reads of a row (rowHeads). */
const HEAD_FIELDS = [
  "state",
  "attempt",
  "paymentId",
  "paymentStatus",
  "paymentUpdatedAt",
  "paymentCreatedAt",
] as const;

/** What an audit reads of a row (auditRows). */
const AUDIT_FIELDS = ["state", "attempt", "paymentId", "paymentUpdatedAt"] as const;

/** What the feed reads of a row (rowStates). */
const STATE_FIELDS = ["state", "attempt"] as const;

/** A row as its result line shows it, from its static record and its state hash (or part of it). */
function outcomeFrom(batchId: string, rowKey: string, s: StaticRow, h: Record<string, string>): RowOutcome {
  return {
    batchId,
    rowKey,
    rowNumber: s.rowNumber,
    instruction: s.instruction,
    source: s.source,
    state: h.state && isRowState(h.state) ? h.state : "queued",
    attempt: Number(h.attempt ?? 1),
    requoteGeneration: Number(h.requoteGeneration ?? 0),
    paymentId: h.paymentId || undefined,
    paymentStatus: h.paymentStatus || undefined,
    debitUsd: optionalNumber(h.debitUsd),
    fxRate: optionalNumber(h.fxRate),
    errorCode: h.errorCode || undefined,
    errorMessage: h.errorMessage || undefined,
    updatedAt: isoOfStamp(h.updatedAt ?? ""),
  };
}

function optionalNumber(value: string | undefined): number | undefined {
  return value === undefined || value === "" ? undefined : Number(value);
}

/**
 * A row's history lines (lua/row-history.lua); `paymentId` is the row's, which a note's
 * mark stands for (row-fields.ts).
 */
export function parseHistory(text: string | undefined, paymentId?: string): RowHistoryEntry[] {
  if (!text) return [];
  return text
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => {
      const [at = "", from = "-", to = "", attempt = "", ...note] = line.split(" ");
      return {
        at: isoOfStamp(at),
        from: from === "-" || !isRowState(from) ? null : from,
        to: (isRowState(to) ? to : "queued") as RowState,
        attempt: Number(attempt),
        note: decodeNote(note.join(" "), paymentId),
      };
    });
}

/** What the row scripts answer: {outcome, state before, attempt}. */
type ScriptOutcome = [string, string, string];

function changeResultOf([outcome, previous, attempt]: ScriptOutcome): RowChangeResult {
  return {
    outcome: outcome as RowChangeOutcome,
    previous: isRowState(previous) ? previous : undefined,
    attempt: attempt ? Number(attempt) : undefined,
  };
}

function batchFromHash(hash: Record<string, string>): BatchRecord | undefined {
  if (!hash.id) return undefined;
  return {
    id: hash.id,
    fileSha256: hash.fileSha256 ?? "",
    ...(hash.fileKey ? { fileKey: hash.fileKey } : {}),
    sourceName: hash.sourceName ?? "",
    entityId: hash.entityId ?? "me",
    createdAt: hash.createdAt ?? "",
    rowCount: Number(hash.rowCount ?? 0),
    invalidCount: Number(hash.invalidCount ?? 0),
    rowsRecorded: hash.rowsRecorded === "1",
    enqueueComplete: hash.enqueueComplete === "1",
    archivePath: hash.archivePath || undefined,
    sheet: parseSheetLayout(hash.sheet),
    ...(hash.finishedAt ? { finishedAt: hash.finishedAt } : {}),
    ...(hash.submittedBy ? { submittedBy: hash.submittedBy } : {}),
    ...(hash.ledger ? { ledger: parseLedgerCheck(hash.ledger) } : {}),
  };
}

/** The batch's last ledger check as stored (JSON); an unreadable one reads as absent. */
function parseLedgerCheck(text: string): LedgerCheck | undefined {
  try {
    const parsed = JSON.parse(text) as LedgerCheck;
    return typeof parsed.summary === "string" && typeof parsed.differences === "number" ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function parseSheetLayout(text: string | undefined): SheetLayout {
  if (!text) return { columns: [], keys: [], format: "csv" };
  const parsed = JSON.parse(text) as Partial<SheetLayout>;
  return {
    columns: Array.isArray(parsed.columns) ? parsed.columns.map(String) : [],
    keys: Array.isArray(parsed.keys) ? parsed.keys.map(String) : [],
    format: parsed.format === "xlsx" ? "xlsx" : "csv",
    archivedSheetPath: parsed.archivedSheetPath,
  };
}

export class BatchStore {
  readonly keys: RedisLayout;
  private readonly now: () => Date;
  private readonly sourceKeysByBatch = new Map<string, readonly string[]>();

  constructor(
    readonly redis: RedisClient,
    options: BatchStoreOptions = {},
  ) {
    this.keys = redisLayout(options.prefix ?? DEFAULT_KEY_PREFIX);
    this.now = options.now ?? (() => new Date());
  }

  /**
   * The batch's column keys (`SheetLayout.keys`), which static row records are written against
   * (static-row.ts): read once per batch and kept, since a batch's layout never changes.
   */
  private async sourceKeys(batchId: string): Promise<readonly string[] | undefined> {
    const known = this.sourceKeysByBatch.get(batchId);
    if (known) return known;
    const sheet = await this.redis.hget(this.keys.batch(batchId), "sheet");
    if (sheet === null) return undefined;
    const keys = parseSheetLayout(sheet).keys;
    this.keepSourceKeys(batchId, keys);
    return keys;
  }

  private keepSourceKeys(batchId: string, keys: readonly string[]): void {
    if (this.sourceKeysByBatch.size >= SOURCE_KEYS_KEPT) this.sourceKeysByBatch.clear();
    this.sourceKeysByBatch.set(batchId, keys);
  }

  // ---- batches ------------------------------------------------------------------------------------

  /** Records a new batch (not yet rows-recorded nor enqueued) and marks it incomplete. */
  async createBatch(batch: BatchRecord): Promise<void> {
    // Its rows are recorded next, against these column keys: no need to read them back.
    this.keepSourceKeys(batch.id, batch.sheet.keys);
    await this.redis
      .multi()
      .hset(this.keys.batch(batch.id), {
        id: batch.id,
        fileSha256: batch.fileSha256,
        fileKey: batch.fileKey ?? "",
        sourceName: batch.sourceName,
        entityId: batch.entityId,
        createdAt: batch.createdAt,
        rowCount: String(batch.rowCount),
        invalidCount: String(batch.invalidCount),
        rowsRecorded: batch.rowsRecorded ? "1" : "0",
        enqueueComplete: batch.enqueueComplete ? "1" : "0",
        archivePath: batch.archivePath ?? "",
        sheet: JSON.stringify(batch.sheet),
        ...(batch.submittedBy === undefined ? {} : { submittedBy: batch.submittedBy }),
      })
      .zadd(this.keys.batches, Date.parse(batch.createdAt) || Date.now(), batch.id)
      .sadd(this.keys.awaitingEnqueue, batch.id)
      .sadd(this.keys.awaitingOutcomes, batch.id)
      .exec();
  }

  /** Batches not yet marked finished (what the reconcile sweep looks at). */
  async batchIdsAwaitingOutcomes(): Promise<string[]> {
    return this.redis.smembers(this.keys.awaitingOutcomes);
  }

  /**
   * Marks a batch finished (every valid row terminal). Returns true only for the call that set it, so
   * whoever reacts to "finished" (the final result file) does so once.
   */
  async markBatchFinished(batchId: string, at: string = this.now().toISOString()): Promise<boolean> {
    const results = await this.redis
      .multi()
      .hsetnx(this.keys.batch(batchId), "finishedAt", at)
      .srem(this.keys.awaitingOutcomes, batchId)
      .exec();
    const [err, set] = results?.[0] ?? [null, 0];
    if (err) throw err;
    return set === 1;
  }

  /**
   * Puts a finished batch back among those awaiting outcomes, when an operator retry gave a row a new
   * attempt: the sweep looks at its rows again, and it is marked finished (and its final result file
   * written) again once every row is final.
   */
  async reopenBatch(batchId: string): Promise<void> {
    await this.redis
      .multi()
      .hdel(this.keys.batch(batchId), "finishedAt")
      .sadd(this.keys.awaitingOutcomes, batchId)
      .exec();
  }

  async getBatch(batchId: string): Promise<BatchRecord | undefined> {
    return batchFromHash(await this.redis.hgetall(this.keys.batch(batchId)));
  }

  async markRowsRecorded(batchId: string): Promise<void> {
    await this.redis.hset(this.keys.batch(batchId), "rowsRecorded", "1");
  }

  async markEnqueueComplete(batchId: string): Promise<void> {
    await this.redis
      .multi()
      .hset(this.keys.batch(batchId), "enqueueComplete", "1")
      .srem(this.keys.awaitingEnqueue, batchId)
      .exec();
  }

  /** Batches whose rows or enqueue were interrupted. */
  async batchIdsAwaitingEnqueue(): Promise<string[]> {
    return this.redis.smembers(this.keys.awaitingEnqueue);
  }

  /** The newest batches first. */
  async latestBatches(limit: number): Promise<BatchRecord[]> {
    const ids = await this.redis.zrevrange(this.keys.batches, 0, limit - 1);
    const batches = await Promise.all(ids.map((id) => this.getBatch(id)));
    return batches.filter((b): b is BatchRecord => b !== undefined);
  }

  /** The batch id recorded for a file's content, if any. */
  async batchIdForFile(fileSha256: string): Promise<string | undefined> {
    return (await this.redis.get(this.keys.fileIndex(fileSha256))) ?? undefined;
  }

  /**
   * Claims a file's content for a batch. Without `replace`, only the first claim wins and the id of
   * the batch that holds it is returned; with it (an allowed duplicate) the newest batch takes it.
   */
  async claimFile(fileSha256: string, batchId: string, replace: boolean): Promise<string> {
    const key = this.keys.fileIndex(fileSha256);
    if (replace) {
      await this.redis.set(key, batchId);
      return batchId;
    }
    const set = await this.redis.set(key, batchId, "NX");
    if (set === "OK") return batchId;
    return (await this.redis.get(key)) ?? batchId;
  }

  // ---- rows ---------------------------------------------------------------------------------------

  /** Records valid rows that are not recorded yet, in chunks. Returns how many were new. */
  async recordRows(batchId: string, rows: readonly SubmittedInstruction[]): Promise<number> {
    let created = 0;
    const nowIso = rowStamp(this.now());
    const sourceKeys = await this.sourceKeys(batchId);
    for (let i = 0; i < rows.length; i += ROW_CHUNK) {
      const chunk = rows.slice(i, i + ROW_CHUNK);
      const statics: string[] = [];
      const rowKeys: string[] = [];
      const args: string[] = [nowIso];
      for (const row of chunk) {
        const { source, attempt, ...instruction } = row;
        const record: StaticRow = { rowNumber: row.rowNumber, instruction, ...(source ? { source } : {}) };
        statics.push(row.rowKey, encodeStaticRow(record, sourceKeys));
        rowKeys.push(this.keys.row(batchId, row.rowKey));
        args.push(row.currency, String(row.amount), String(attempt ?? 1));
      }
      // The static records (written once: a resumed submission or a recovery must never put back the
      // original of a row an operator corrected since) with the sheet order, for result files that
      // stream a page at a time, then the rows' state: sent together (one round trip), run by Redis in
      // this order. Either alone (a crash, a failure) is what the feed and a resumed submission handle.
      const [, initialised] = await Promise.all([
        RECORD_STATIC_ROWS.run(this.redis, [this.keys.rows(batchId), this.keys.order(batchId)], statics),
        INIT_ROWS.run(this.redis, [this.keys.counts(batchId), this.keys.totals(batchId), ...rowKeys], args),
      ]);
      created += Number(initialised);
    }
    return created;
  }

  async recordInvalidRows(batchId: string, rows: readonly InvalidRowInput[]): Promise<void> {
    for (let i = 0; i < rows.length; i += ROW_CHUNK) {
      const fields: string[] = [];
      for (const row of rows.slice(i, i + ROW_CHUNK)) {
        fields.push(String(row.rowNumber), JSON.stringify({ source: row.source, problems: row.problems }));
      }
      if (fields.length > 0) await this.redis.hset(this.keys.invalid(batchId), ...fields);
    }
  }

  async invalidRows(batchId: string): Promise<InvalidRowRecord[]> {
    const hash = await this.redis.hgetall(this.keys.invalid(batchId));
    return Object.entries(hash)
      .map(([rowNumber, json]) => {
        const parsed = JSON.parse(json) as { source?: SourceValues; problems: InvalidRowProblem[] };
        return { rowNumber: Number(rowNumber), source: parsed.source, problems: parsed.problems };
      })
      .sort((a, b) => a.rowNumber - b.rowNumber);
  }

  /**
   * Row keys in sheet order, `count` from `start`, or undefined when the batch has no complete order
   * list (recorded before it existed, or partly rebuilt by a recovery): then sort {@link rowKeys}.
   */
  async rowKeysInOrder(batchId: string, start: number, count: number): Promise<string[] | undefined> {
    if (start === 0) {
      const [listed, recorded] = await Promise.all([
        this.redis.llen(this.keys.order(batchId)),
        this.redis.hlen(this.keys.rows(batchId)),
      ]);
      if (listed !== recorded) return undefined;
    }
    return this.redis.lrange(this.keys.order(batchId), start, start + count - 1);
  }

  /** Row keys of a batch's valid rows (unordered), about ROW_CHUNK a page, without holding them all. */
  async *rowKeyPages(batchId: string): AsyncGenerator<string[]> {
    let cursor = "0";
    do {
      const [next, flat] = await this.redis.hscan(this.keys.rows(batchId), cursor, "COUNT", ROW_CHUNK);
      cursor = next;
      const rowKeys: string[] = [];
      for (let i = 0; i < flat.length; i += 2) rowKeys.push(flat[i]!);
      if (rowKeys.length > 0) yield rowKeys;
    } while (cursor !== "0");
  }

  /** Row keys of a batch's valid rows (unordered). */
  async rowKeys(batchId: string): Promise<string[]> {
    return this.redis.hkeys(this.keys.rows(batchId));
  }

  /** State and attempt of many rows, in the order asked (undefined for a row not recorded). */
  async rowStates(
    batchId: string,
    rowKeys: readonly string[],
  ): Promise<({ state: RowState; attempt: number } | undefined)[]> {
    return (await this.readRows(batchId, rowKeys, STATE_FIELDS, false)).map(({ values: [state, attempt] }) =>
      state && isRowState(state) ? { state, attempt: Number(attempt ?? 1) } : undefined,
    );
  }

  /**
   * What reconciliation needs of many rows (state, attempt, payment and its times), in the order
   * asked, in one pipeline and without decoding their static records or histories; undefined for a
   * row not recorded.
   */
  async rowHeads(batchId: string, rowKeys: readonly string[]): Promise<(RowHead | undefined)[]> {
    const read = await this.readRows(batchId, rowKeys, HEAD_FIELDS, false);
    return read.map(({ rowKey, values }) => {
      const [state, attempt, paymentId, paymentStatus, updatedAt, createdAt] = values;
      if (!state || !isRowState(state)) return undefined;
      return {
        batchId,
        rowKey,
        state,
        attempt: Number(attempt ?? 1),
        paymentId: paymentId || undefined,
        paymentStatus: paymentStatus || undefined,
        paymentUpdatedAt: updatedAt ? isoOfStamp(updatedAt) : undefined,
        paymentCreatedAt: createdAt ? isoOfStamp(createdAt) : undefined,
      };
    });
  }

  async getRow(batchId: string, rowKey: string): Promise<RowRecord | undefined> {
    // Two plain commands, not a pipeline: on an auto-pipelined connection they share one write anyway.
    const [staticJson, hash, sourceKeys] = await Promise.all([
      this.redis.hget(this.keys.rows(batchId), rowKey),
      this.redis.hgetall(this.keys.row(batchId, rowKey)),
      this.sourceKeys(batchId),
    ]);
    if (!staticJson || !hash.state) return undefined;
    return this.rowFrom(batchId, rowKey, decodeStaticRow(rowKey, staticJson, sourceKeys), hash);
  }

  /**
   * The rows with these keys as their result lines show them (missing ones left out): the static
   * record and the fields a result line has, in one reply, without the history a full row carries
   * (a result file is rewritten while its batch runs: the history would be read and parsed each time).
   */
  async rowOutcomesPage(batchId: string, rowKeys: readonly string[]): Promise<RowOutcome[]> {
    const read = await this.withStaticRecords(batchId, rowKeys, OUTCOME_FIELDS);
    return read.flatMap(({ rowKey, record, values }) => {
      const hash: Record<string, string> = {};
      OUTCOME_FIELDS.forEach((field, i) => {
        const value = values[i];
        if (value !== null && value !== undefined) hash[field] = value;
      });
      return hash.state ? [outcomeFrom(batchId, rowKey, record, hash)] : [];
    });
  }

  /**
   * The rows with these keys as an audit holds them against the ledger (missing ones left out): the
   * static record (instruction, row number) and the state, attempt and payment, in one reply,
   * without the history a full row carries.
   */
  async auditRows(batchId: string, rowKeys: readonly string[]): Promise<AuditedRow[]> {
    const read = await this.withStaticRecords(batchId, rowKeys, AUDIT_FIELDS);
    return read.flatMap(({ rowKey, record, values: [state, attempt, paymentId, updatedAt] }) =>
      state && isRowState(state)
        ? [
            {
              rowKey,
              rowNumber: record.rowNumber,
              instruction: record.instruction,
              state,
              attempt: Number(attempt ?? 1),
              paymentId: paymentId || undefined,
              paymentUpdatedAt: updatedAt ? isoOfStamp(updatedAt) : undefined,
            },
          ]
        : [],
    );
  }

  /**
   * The static records of the rows with these keys, each beside the `fields` of its state hash, in
   * one reply, in the order given; rows without a static record are left out.
   */
  private async withStaticRecords(
    batchId: string,
    rowKeys: readonly string[],
    fields: readonly string[],
  ): Promise<{ rowKey: string; record: StaticRow; values: (string | null)[] }[]> {
    const [sourceKeys, read] = await Promise.all([
      this.sourceKeys(batchId),
      this.readRows(batchId, rowKeys, fields, true),
    ]);
    return read.flatMap(({ rowKey, json, values }) =>
      json ? [{ rowKey, record: decodeStaticRow(rowKey, json, sourceKeys), values }] : [],
    );
  }

  /**
   * The `fields` of many rows' state hashes (and, with `withStatic`, their static records), in the
   * order given, in one script call per ROW_CHUNK rows: a reply per chunk, not a command per row.
   */
  private async readRows(
    batchId: string,
    rowKeys: readonly string[],
    fields: readonly string[],
    withStatic: boolean,
  ): Promise<{ rowKey: string; json: string | null; values: (string | null)[] }[]> {
    const out: { rowKey: string; json: string | null; values: (string | null)[] }[] = [];
    const width = fields.length + (withStatic ? 1 : 0);
    for (let i = 0; i < rowKeys.length; i += ROW_CHUNK) {
      const chunk = rowKeys.slice(i, i + ROW_CHUNK);
      const flat = (await READ_ROWS.run(
        this.redis,
        [this.keys.rows(batchId)],
        [this.keys.rowPrefix(batchId), withStatic ? "1" : "0", fields.length, ...fields, ...chunk],
      )) as (string | null)[];
      chunk.forEach((rowKey, j) => {
        const at = j * width;
        const json = withStatic ? (flat[at] ?? null) : null;
        out.push({ rowKey, json, values: flat.slice(at + width - fields.length, at + width) });
      });
    }
    return out;
  }

  /**
   * The rows with these keys, in the order given (missing ones left out), in one pipeline: how
   * filtered pages of rows are read a chunk at a time instead of a round trip per row.
   */
  async rowsPage(batchId: string, rowKeys: readonly string[]): Promise<RowRecord[]> {
    if (rowKeys.length === 0) return [];
    const sourceKeys = await this.sourceKeys(batchId);
    const pipeline = this.redis.pipeline();
    pipeline.hmget(this.keys.rows(batchId), ...rowKeys);
    for (const rowKey of rowKeys) pipeline.hgetall(this.keys.row(batchId, rowKey));
    const results = (await pipeline.exec()) ?? [];
    const [staticsErr, statics] = results[0] as [Error | null, (string | null)[]];
    if (staticsErr) throw staticsErr;
    return rowKeys.flatMap((rowKey, i) => {
      const [err, hash] = results[i + 1] as [Error | null, Record<string, string>];
      if (err) throw err;
      const json = statics[i];
      return json && hash.state
        ? [this.rowFrom(batchId, rowKey, decodeStaticRow(rowKey, json, sourceKeys), hash)]
        : [];
    });
  }

  /** Every valid row of a batch, ordered by row number (for status, result files and recovery). */
  async listRows(batchId: string): Promise<RowRecord[]> {
    const statics = await this.redis.hgetall(this.keys.rows(batchId));
    const sourceKeys = await this.sourceKeys(batchId);
    const entries = Object.entries(statics);
    const rows: RowRecord[] = [];
    for (let i = 0; i < entries.length; i += ROW_CHUNK) {
      const chunk = entries.slice(i, i + ROW_CHUNK);
      const pipeline = this.redis.pipeline();
      for (const [rowKey] of chunk) pipeline.hgetall(this.keys.row(batchId, rowKey));
      const results = (await pipeline.exec()) ?? [];
      chunk.forEach(([rowKey, json], j) => {
        const [err, hash] = results[j] as [Error | null, Record<string, string>];
        if (err) throw err;
        if (hash.state)
          rows.push(this.rowFrom(batchId, rowKey, decodeStaticRow(rowKey, json, sourceKeys), hash));
      });
    }
    return rows.sort((a, b) => a.rowNumber - b.rowNumber);
  }

  private rowFrom(batchId: string, rowKey: string, s: StaticRow, h: Record<string, string>): RowRecord {
    return {
      ...outcomeFrom(batchId, rowKey, s, h),
      ...(h.fees ? { fees: decodeFees(h.fees, h.currency) } : {}),
      ...(h.paymentUpdatedAt ? { paymentUpdatedAt: isoOfStamp(h.paymentUpdatedAt) } : {}),
      ...(h.paymentCreatedAt ? { paymentCreatedAt: isoOfStamp(h.paymentCreatedAt) } : {}),
      quote: h.quote ? (JSON.parse(h.quote) as StoredFxQuote) : undefined,
      sentBodyHash: h.sentBodyHash || undefined,
      sentGeneration: optionalNumber(h.sentGeneration),
      lastSentAt: optionalNumber(h.lastSentAt),
      inDoubtUntil: optionalNumber(h.inDoubtUntil),
      history: parseHistory(h.history, h.paymentId || undefined),
    };
  }

  /** Applies one atomic, forward-only change to a row (see {@link RowChange}). */
  async changeRow(batchId: string, rowKey: string, change: RowChange): Promise<RowChangeResult> {
    const args: string[] = [
      change.expectedAttempt === undefined ? "" : String(change.expectedAttempt),
      change.to ?? "",
      rowStamp(this.now()),
      encodeNote(change.note, change.fields?.paymentId),
    ];
    const conditions = Object.entries(change.expect ?? {});
    args.push(String(conditions.length));
    for (const [field, value] of conditions) {
      args.push(field, encodeField((value ?? null) as string | number | StoredFxQuote | null));
    }
    for (const [field, value] of Object.entries(change.fields ?? {})) {
      if (value === undefined) continue;
      args.push(field, encodeRowField(field, value as string | number | StoredFxQuote | Fee[] | null));
    }
    const result = (await TRANSITION_ROW.run(
      this.redis,
      [
        this.keys.row(batchId, rowKey),
        this.keys.counts(batchId),
        this.keys.totals(batchId),
        this.keys.open(batchId),
        this.keys.createdPerSecond(batchId),
      ],
      args,
    )) as ScriptOutcome;
    return changeResultOf(result);
  }

  /**
   * The send fence, checked atomically right before a POST /payments (see FENCE_SEND): `ok` (and the
   * send time recorded) only while this run may still send this row's body under its key.
   */
  async fenceSend(batchId: string, rowKey: string, fence: SendFence): Promise<SendFenceOutcome> {
    const keys = [this.keys.row(batchId, rowKey), this.keys.stop(batchId)];
    const args = [
      String(fence.attempt),
      String(fence.requoteGeneration),
      fence.bodyHash ?? "",
      String(fence.now),
      String(fence.inDoubtUntil),
    ];
    if (fence.lock) {
      keys.push(fence.lock.key);
      args.push(fence.lock.token);
    }
    const [outcome] = (await FENCE_SEND.run(this.redis, keys, args)) as ScriptOutcome;
    return outcome as SendFenceOutcome;
  }

  /**
   * Starts the next attempt of a failed, canceled, rejected or errored row (an operator retry). The
   * caller then enqueues the row's new job. Rows in flight or paid are refused. With `nowMs`, an
   * `error` row whose last request may still reach the service then (`inDoubtUntil`) is refused as
   * `in-doubt`: that request may still create its payment.
   */
  async startNewAttempt(
    batchId: string,
    rowKey: string,
    expectedAttempt: number,
    note = "operator retry",
    nowMs?: number,
  ): Promise<RowChangeResult> {
    const result = (await START_NEW_ATTEMPT.run(
      this.redis,
      [
        this.keys.row(batchId, rowKey),
        this.keys.counts(batchId),
        this.keys.totals(batchId),
        this.keys.stop(batchId),
      ],
      [String(expectedAttempt), rowStamp(this.now()), JSON.stringify(note), msArg(nowMs)],
    )) as ScriptOutcome;
    return changeResultOf(result);
  }

  /**
   * {@link startNewAttempt} for a row the operator corrected (a result file dropped back in): in the
   * same atomic step the row's instruction and source cells are replaced, so the new attempt can only
   * ever pay the corrected values, and the batch's money totals move from the old amount to the new.
   * The row keeps its number and key (its identity); only failed, canceled, rejected or errored rows
   * on `expectedAttempt` are changed, exactly as in startNewAttempt.
   */
  async startNewAttemptWithCorrection(
    batchId: string,
    rowKey: string,
    expectedAttempt: number,
    correction: { instruction: PayoutInstruction; source?: SourceValues | undefined },
    note = "operator retry with corrected inputs",
    nowMs?: number,
  ): Promise<RowChangeResult> {
    const { instruction } = correction;
    if (instruction.rowKey !== rowKey) {
      throw new RangeError(`a correction of row ${rowKey} cannot carry row key ${instruction.rowKey}`);
    }
    const record: StaticRow = {
      rowNumber: instruction.rowNumber,
      instruction,
      ...(correction.source ? { source: correction.source } : {}),
    };
    const sourceKeys = await this.sourceKeys(batchId);
    const result = (await START_NEW_ATTEMPT.run(
      this.redis,
      [
        this.keys.row(batchId, rowKey),
        this.keys.counts(batchId),
        this.keys.totals(batchId),
        this.keys.stop(batchId),
        this.keys.rows(batchId),
      ],
      [
        String(expectedAttempt),
        rowStamp(this.now()),
        JSON.stringify(note),
        msArg(nowMs),
        rowKey,
        encodeStaticRow(record, sourceKeys),
        instruction.currency,
        String(instruction.amount),
      ],
    )) as ScriptOutcome;
    return changeResultOf(result);
  }

  // ---- attachments --------------------------------------------------------------------------------

  async attachmentFor(batchId: string, filePath: string): Promise<string | undefined> {
    return (await this.redis.hget(this.keys.attachments(batchId), filePath)) ?? undefined;
  }

  /** Stores an uploaded attachment's id unless another worker stored one first; returns the id to use. */
  async rememberAttachment(batchId: string, filePath: string, attachmentId: string): Promise<string> {
    await this.redis.hsetnx(this.keys.attachments(batchId), filePath, attachmentId);
    return (await this.attachmentFor(batchId, filePath)) ?? attachmentId;
  }

  // ---- the sweep's index --------------------------------------------------------------------------

  /**
   * Rows with a payment not final yet whose last touch is at or before `before` (Redis time, ms), up
   * to `limit`, oldest first, with their payment ids: what the sweep looks at, read from the batch's
   * open index without reading any other row.
   */
  async staleOpenRows(
    batchId: string,
    before: number,
    limit: number,
  ): Promise<{ rowKey: string; paymentId: string | undefined }[]> {
    const rowKeys = await this.redis.zrangebyscore(
      this.keys.open(batchId),
      "-inf",
      before,
      "LIMIT",
      0,
      limit,
    );
    if (rowKeys.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const rowKey of rowKeys) pipeline.hget(this.keys.row(batchId, rowKey), "paymentId");
    const results = (await pipeline.exec()) ?? [];
    return rowKeys.map((rowKey, i) => {
      const [err, paymentId] = results[i] as [Error | null, string | null];
      if (err) throw err;
      return { rowKey, paymentId: paymentId ?? undefined };
    });
  }

  /**
   * Marks open rows as looked at now (the sweep queued a look), so the next sweep passes them by until
   * they are stale again; rows that left the index meanwhile are not put back.
   */
  async touchOpenRows(batchId: string, rowKeys: readonly string[], at: number): Promise<void> {
    if (rowKeys.length === 0) return;
    const args: (string | number)[] = [];
    for (const rowKey of rowKeys) args.push(at, rowKey);
    await this.redis.zadd(this.keys.open(batchId), "XX", ...args);
  }

  /** Drops a row from the open index (it is not open any more, or no longer exists). */
  async forgetOpenRows(batchId: string, rowKeys: readonly string[]): Promise<void> {
    if (rowKeys.length > 0) await this.redis.zrem(this.keys.open(batchId), ...rowKeys);
  }

  /** Redis's clock in ms: the open index's scores are in it. */
  async redisTimeMs(): Promise<number> {
    const [seconds, micros] = await this.redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  // ---- the ledger's side: checks and the watch of finished batches ---------------------------------

  /** Keeps the outcome of the batch's last ledger check on the batch (shown by status, API, notice). */
  async recordLedgerCheck(batchId: string, check: LedgerCheck): Promise<void> {
    await this.redis.hset(this.keys.batch(batchId), "ledger", JSON.stringify(check));
  }

  /**
   * Watches a finished batch for returns until `untilMs` (ms), first looking at `nextMs`: both kept in
   * the watch index (the batch's end of watch on its record).
   */
  async watchBatch(batchId: string, nextMs: number, untilMs: number): Promise<void> {
    await this.redis
      .multi()
      .hset(this.keys.batch(batchId), "watchUntil", String(untilMs))
      .zadd(this.keys.watched, nextMs, batchId)
      .exec();
  }

  /** Watched batches whose next look is due at `nowMs`, with when their watch ends (ms). */
  async watchedBatchesDue(nowMs: number, limit: number): Promise<{ batchId: string; untilMs: number }[]> {
    const ids = await this.redis.zrangebyscore(this.keys.watched, "-inf", nowMs, "LIMIT", 0, limit);
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hget(this.keys.batch(id), "watchUntil");
    const results = (await pipeline.exec()) ?? [];
    return ids.map((batchId, i) => {
      const [err, until] = results[i] as [Error | null, string | null];
      if (err) throw err;
      return { batchId, untilMs: until === null ? 0 : Number(until) };
    });
  }

  /** The watched batch's next look (only while it is still watched). */
  async rescheduleWatch(batchId: string, nextMs: number): Promise<void> {
    await this.redis.zadd(this.keys.watched, "XX", nextMs, batchId);
  }

  /** Stops watching a batch (its window passed, or it no longer exists). */
  async unwatchBatch(batchId: string): Promise<void> {
    await this.redis.zrem(this.keys.watched, batchId);
  }

  // ---- progress -----------------------------------------------------------------------------------

  async progress(batchId: string): Promise<BatchProgress | undefined> {
    // One round trip: the counters of a batch that does not exist read empty and are dropped.
    const [batch, countsHash, totalsHash] = await Promise.all([
      this.getBatch(batchId),
      this.redis.hgetall(this.keys.counts(batchId)),
      this.redis.hgetall(this.keys.totals(batchId)),
    ]);
    if (!batch) return undefined;
    const counts = Object.fromEntries(ROW_STATES.map((s) => [s, Number(countsHash[s] ?? 0)])) as Record<
      RowState,
      number
    >;
    const totals: BatchProgress["totals"] = {};
    for (const [field, value] of Object.entries(totalsHash)) {
      const [state, currency] = field.split("|");
      const amount = Number(value);
      if (!state || !currency || !isRowState(state) || amount === 0) continue;
      totals[currency] ??= {};
      totals[currency][state] = amount;
    }
    const done = TERMINAL_ROW_STATES.reduce((sum, s) => sum + counts[s], 0);
    return { batch, counts, totals, done };
  }
}
