/**
 * Finding a batch's rows at any size (docs/design.md §3.9): in sheet order, a page jump away, and by a
 * filter (states, a search text, the invalid rows) without loading the batch.
 *
 * - **Sheet order** is the batch's `order` list (redis-layout.ts): a page is one LRANGE from any
 *   position, so the first page and a page 900,000 rows in cost about the same.
 * - **A filter** is matched inside Redis by one read-only script that walks the order list from a
 *   position, a chunk at a time, and stops when the page is full or its budget of rows is spent; it
 *   answers the matches and where to go on. A request runs the script a few times within its own
 *   budget and hands back a cursor (a position in the list), so a search through 1,000,000 rows is a
 *   series of short requests, each blocking Redis for milliseconds, never one long walk.
 * - **Invalid rows** (never in the pipeline; the batch's `invalid` hash) are paged by an index of their
 *   row numbers, built once per batch on first use (they never change once the batch is recorded).
 * - A batch without a complete order list (recorded by an older version, or partly rebuilt by a
 *   recovery) is walked with HSCAN instead, in the store's order (sorted within a page), no jump.
 *
 * The search text matches, case-insensitively, part of a row's reference, payment id or error code,
 * or its cells and accounts as recorded; a text that reads as an amount (`150`, `150.00`) matches
 * rows of that amount in their currency instead; payee names are resolved to account ids first.
 */
import { currencyExponent } from "../money/index.js";
import { luaScript } from "../redis/index.js";
import type { BatchStore } from "./batch-store.js";
import type { RowState } from "./row-state.js";
import type { RowRecord } from "./types.js";

/** Rows looked at per script run (bounds how long one run holds Redis). */
export const SCRIPT_BUDGET = 5_000;
/** Rows looked at per request at most (bounds the time of one request); then a cursor is answered. */
export const REQUEST_BUDGET = 50_000;

const SCAN = luaScript(new URL("./lua/scan-rows.lua", import.meta.url));

export type ScanMode = "list" | "hash" | "invalid";

/** Where a listing goes on: a position in the order list or invalid index, or an HSCAN cursor. */
export interface ScanCursor {
  mode: ScanMode;
  pos: string;
  skip: number;
}

export function encodeScanCursor(c: ScanCursor): string {
  return Buffer.from(`${c.mode}.${c.pos}.${c.skip}`).toString("base64url");
}

export function decodeScanCursor(text: string): ScanCursor | undefined {
  const m = /^(list|hash|invalid)\.(\d{1,20})\.(\d{1,6})$/.exec(
    Buffer.from(text, "base64url").toString("latin1"),
  );
  return m ? { mode: m[1] as ScanMode, pos: m[2]!, skip: Number(m[3]) } : undefined;
}

export interface RowQuery {
  /** Row states to keep (none: every state). */
  states?: ReadonlySet<RowState> | undefined;
  /** The batch's invalid rows instead of its valid ones. */
  invalid?: boolean | undefined;
  /** Search text (see the module comment). */
  q?: string | undefined;
  /** Account ids whose payee name matches `q` (resolved by the caller). */
  payeeIds?: readonly string[] | undefined;
  limit: number;
  /** Where to start: a position in sheet order (0-based), for a page jump. */
  offset?: number | undefined;
  cursor?: ScanCursor | undefined;
  /** Rows looked at per request (default {@link REQUEST_BUDGET}). */
  budget?: number | undefined;
}

export interface ScanPage {
  /** Row keys (valid rows) or row numbers (invalid rows) of the page, in sheet order. */
  keys: string[];
  mode: ScanMode;
  /** Where the page started (a position in sheet order), when the listing has positions. */
  offset: number | null;
  /** How far the walk got (position), when the listing has positions: for "searched n of m". */
  reached: number | null;
  /** Rows in the listing (valid rows, or invalid rows). */
  size: number;
  next: ScanCursor | null;
}

/** `q` as an amount: the minor units it means in each of `currencies`, or undefined when it is not one. */
export function amountNeedle(q: string, currencies: readonly string[]): string | undefined {
  const m = /^(\d{1,15})(?:\.(\d{1,4}))?$/.exec(q.replaceAll(",", "").trim());
  if (!m) return undefined;
  const parts: string[] = [];
  for (const currency of currencies) {
    const exponent = currencyExponent(currency);
    if (exponent === undefined) continue;
    const fraction = m[2] ?? "";
    if (fraction.replace(/0+$/, "").length > exponent) continue;
    const minor =
      BigInt(m[1]!) * 10n ** BigInt(exponent) +
      BigInt((fraction + "0".repeat(exponent)).slice(0, exponent) || "0");
    parts.push(`${currency}:${minor}`);
  }
  return parts.length > 0 ? `,${parts.join(",")},` : ",none:0,";
}

/** The index of a batch's invalid rows by row number, built once (they never change once recorded). */
async function invalidIndex(store: BatchStore, batchId: string): Promise<string> {
  const index = `${store.keys.batch(batchId)}:api:invalid-order`;
  const redis = store.redis;
  if ((await redis.hget(`${index}:state`, "complete")) === "1") return index;
  let scan = "0";
  do {
    const [next, flat] = await redis.hscan(store.keys.invalid(batchId), scan, "COUNT", 5000);
    const args: (string | number)[] = [];
    for (let i = 0; i < flat.length; i += 2) args.push(Number(flat[i]), flat[i]!);
    if (args.length > 0) await redis.zadd(index, ...args);
    scan = next;
  } while (scan !== "0");
  // Complete only once the batch's rows are all recorded: an index built earlier is built again.
  if ((await store.getBatch(batchId))?.rowsRecorded) await redis.hset(`${index}:state`, "complete", "1");
  return index;
}

/** One page of a batch's rows as row keys (see the module comment). */
export async function scanRows(store: BatchStore, batchId: string, query: RowQuery): Promise<ScanPage> {
  const redis = store.redis;
  const order = store.keys.order(batchId);
  let mode: ScanMode;
  let size: number;
  let source: string;
  if (query.invalid) {
    source = await invalidIndex(store, batchId);
    mode = "invalid";
    size = await redis.zcard(source);
  } else {
    const [listed, recorded] = await Promise.all([redis.llen(order), redis.hlen(store.keys.rows(batchId))]);
    mode = listed === recorded ? "list" : "hash";
    size = recorded;
    source = order;
  }
  const positional = mode !== "hash";
  const cursor = query.cursor?.mode === mode ? query.cursor : undefined;
  const start = cursor ? cursor.pos : positional ? String(Math.max(0, query.offset ?? 0)) : "0";
  const needle = query.q?.trim().toLowerCase() ?? "";
  const filtered = needle !== "" || (query.states !== undefined && query.states.size > 0);

  // Sheet order without a filter: a page is one range read.
  if (positional && !filtered) {
    const from = Number(start);
    const keys =
      mode === "list"
        ? await redis.lrange(order, from, from + query.limit - 1)
        : await redis.zrange(source, from, from + query.limit - 1);
    const to = from + keys.length;
    return {
      keys,
      mode,
      offset: from,
      reached: to,
      size,
      next: to < size ? { mode, pos: String(to), skip: 0 } : null,
    };
  }

  const states = query.states && query.states.size > 0 ? `,${[...query.states].join(",")},` : "";
  const currencies = mode === "invalid" ? [] : await batchCurrencies(store, batchId);
  const amounts = needle && mode !== "invalid" ? (amountNeedle(needle, currencies) ?? "") : "";
  const payees = (query.payeeIds ?? []).slice(0, 50).join(" ");
  const budget = query.budget ?? REQUEST_BUDGET;
  const keys: string[] = [];
  let pos = start;
  let skip = cursor?.skip ?? 0;
  let looked = 0;
  let done = false;
  while (!done && keys.length < query.limit && looked < budget) {
    const reply = (await SCAN.run(
      redis,
      [source, store.keys.rows(batchId), store.keys.invalid(batchId)],
      [
        mode,
        store.keys.rowPrefix(batchId),
        pos,
        skip,
        Math.min(SCRIPT_BUDGET, budget - looked),
        query.limit - keys.length,
        states,
        needle,
        amounts,
        payees,
      ],
    )) as string[];
    const [nextPos, nextSkip, count, ...hits] = reply;
    keys.push(...hits);
    looked += Number(count);
    if (nextPos === "-1") done = true;
    else {
      pos = nextPos!;
      skip = Number(nextSkip);
    }
  }
  if (mode === "invalid") keys.sort((a, b) => Number(a) - Number(b));
  return {
    keys,
    mode,
    offset: positional ? Number(start) : null,
    reached: positional ? (done ? size : Number(pos)) : null,
    size,
    next: done ? null : { mode, pos, skip },
  };
}

/** The currencies of a batch's rows (its money totals' keys): what an amount search compares in. */
async function batchCurrencies(store: BatchStore, batchId: string): Promise<string[]> {
  const fields = await store.redis.hkeys(store.keys.totals(batchId));
  return [...new Set(fields.map((f) => f.split("|")[1]).filter((c): c is string => !!c))];
}

/** The rows of a page of keys (valid rows), in the page's order; hash pages sorted by row number. */
export async function rowsOfPage(store: BatchStore, batchId: string, page: ScanPage): Promise<RowRecord[]> {
  const rows = await store.rowsPage(batchId, page.keys);
  return page.mode === "hash" ? rows.sort((a, b) => a.rowNumber - b.rowNumber) : rows;
}
