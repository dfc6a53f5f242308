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
import type { BatchStore } from "./batch-store.js";
import { defineLuaScript, runScript } from "./redis-scripts.js";
import type { RowState } from "./row-state.js";
import type { RowRecord } from "./types.js";

/** Rows looked at per script run (bounds how long one run holds Redis). */
export const SCRIPT_BUDGET = 5_000;
/** Rows looked at per request at most (bounds the time of one request); then a cursor is answered. */
export const REQUEST_BUDGET = 50_000;

const SCAN = defineLuaScript(
  "api-row-scan",
  `
local mode = ARGV[1]
local row_prefix = ARGV[2]
local pos = ARGV[3]
local skip = tonumber(ARGV[4])
local budget = tonumber(ARGV[5])
local limit = tonumber(ARGV[6])
local states = ARGV[7]
local needle = ARGV[8]
local amounts = ARGV[9]
local payees = ARGV[10]
local CHUNK = 250
local found = {}
local looked = 0

local function amount_of(record)
  -- The compact record reads [rowNumber, reference, "from", "to", amount, "CUR", ...]: a reference
  -- and account ids never hold ',<digits>,"', so the first such pair is the amount and currency.
  if string.sub(record, 1, 1) == '[' then
    local amount, currency = string.match(record, '^%[%d+,[^,]*,"[^"]*","[^"]*",(%d+),"(%u%u%u)"')
    if amount then return amount, currency end
  end
  local ok, r = pcall(cjson.decode, record)
  if not ok or type(r) ~= 'table' then return nil, nil end
  if r.instruction then return string.format('%d', r.instruction.amount), r.instruction.currency end
  return r[5] and string.format('%d', r[5]), r[6]
end

local function text_matches(key, record)
  if amounts ~= '' then
    local amount, currency = amount_of(record)
    if amount and currency and string.find(amounts, ',' .. currency .. ':' .. amount .. ',', 1, true) then
      return true
    end
    return false
  end
  if string.find(string.lower(record), needle, 1, true) then return true end
  if payees ~= '' then
    for id in string.gmatch(payees, '[^ ]+') do
      if string.find(record, '"' .. id .. '"', 1, true) then return true end
    end
  end
  return false
end

local function valid_matches(key, record)
  if states == '' and needle == '' then return true end
  local h = redis.call('HMGET', row_prefix .. key, 'state', 'paymentId', 'errorCode')
  if states ~= '' and (not h[1] or not string.find(states, ',' .. h[1] .. ',', 1, true)) then return false end
  if needle == '' then return true end
  if string.find(string.lower(key), needle, 1, true) then return true end
  if h[2] and string.find(string.lower(h[2]), needle, 1, true) then return true end
  if h[3] and string.find(string.lower(h[3]), needle, 1, true) then return true end
  record = record or redis.call('HGET', KEYS[2], key)
  return record and text_matches(key, record) or false
end

local function invalid_matches(record)
  if needle == '' then return true end
  return record and string.find(string.lower(record), needle, 1, true) ~= nil
end

local function answer(next_pos, next_skip)
  local out = { tostring(next_pos), tostring(next_skip), tostring(looked) }
  for _, k in ipairs(found) do out[#out + 1] = k end
  return out
end

if mode == 'list' or mode == 'invalid' then
  local i = tonumber(pos)
  while looked < budget do
    local keys
    if mode == 'list' then keys = redis.call('LRANGE', KEYS[1], i, i + CHUNK - 1)
    else keys = redis.call('ZRANGE', KEYS[1], i, i + CHUNK - 1) end
    if #keys == 0 then return answer(-1, 0) end
    local records
    if mode == 'invalid' and needle ~= '' then records = redis.call('HMGET', KEYS[3], unpack(keys)) end
    for j, key in ipairs(keys) do
      looked = looked + 1
      local hit
      if mode == 'list' then hit = valid_matches(key, nil) else hit = invalid_matches(records and records[j]) end
      if hit then
        found[#found + 1] = key
        if #found >= limit then return answer(i + j, 0) end
      end
    end
    i = i + #keys
    if #keys < CHUNK then return answer(-1, 0) end
  end
  return answer(i, 0)
end

-- mode 'hash': HSCAN the rows hash from a cursor; skip entries of the chunk handed out already.
local cursor = pos
while looked < budget do
  local reply = redis.call('HSCAN', KEYS[2], cursor, 'COUNT', CHUNK)
  local flat = reply[2]
  local n = #flat / 2
  for j = skip + 1, n do
    looked = looked + 1
    local key = flat[j * 2 - 1]
    if valid_matches(key, flat[j * 2]) then
      found[#found + 1] = key
      if #found >= limit then
        if j < n then return answer(cursor, j) end
        if reply[1] == '0' then return answer(-1, 0) end
        return answer(reply[1], 0)
      end
    end
  end
  skip = 0
  cursor = reply[1]
  if cursor == '0' then return answer(-1, 0) end
end
return answer(cursor, 0)
`,
);

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
    const reply = (await runScript(
      redis,
      SCAN,
      [source, store.keys.rows(batchId), store.keys.invalid(batchId)],
      [
        mode,
        `${store.keys.batch(batchId)}:row:`,
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
