/**
 * The Lua scripts that change a row (./lua/, each file saying its KEYS and ARGV), so that every change
 * is atomic: the state check, the new fields, the per-state counters, the money totals and the history
 * line move together or not at all. The scripts never decode JSON (Lua's cjson rounds numbers and turns
 * empty arrays into objects); values arrive ready-encoded from TypeScript. The state machine's tables
 * and the codes the scripts test come from TypeScript (row-state.ts, row-codes.ts, row-fields.ts).
 */
import { luaScript } from "../redis/index.js";
import { NEVER_RETRIED_CODES } from "./row-codes.js";
import { PAYMENT_ID_MARK, RECORDED_NOTE_CODE } from "./row-fields.js";
import { rowStateTables } from "./row-state.js";

/**
 * A row's history: one compact line per change, `<at> <from|-> <to> <attempt> <note as JSON>` (about
 * half the bytes of a JSON object per line; `at`, like the row's `updatedAt`, is batch-store.ts's
 * rowStamp, base-36 milliseconds; the note, last, may hold spaces; a mark may stand in it for the
 * row's payment id, row-fields.ts), and only the latest HISTORY_MAX lines are kept, so a row's
 * record stays small however often it is retried. batch-store.ts's parseHistory reads these lines.
 */
export const HISTORY_MAX = 20;

/** What lua/row-history.lua needs. */
const HISTORY = { HISTORY_MAX, PAYMENT_ID_MARK };

/**
 * The fields only a row's sends use (the send fence, the stored quote and body, the in-doubt window of
 * an `error` row's retry): dropped once the row reaches a terminal payment state (`completed`,
 * `failed`, `canceled`) with its payment recorded. No send of that attempt can happen any more (the
 * fence needs `queued`), only an `error` row's retry reads the in-doubt window, and a retry of a
 * failed or canceled row starts the next attempt, whose sends store their own.
 */
export const SEND_ONLY_FIELDS = [
  "quote",
  "sentBodyHash",
  "sentGeneration",
  "lastSentAt",
  "inDoubtUntil",
  "sentAttempt",
  "releasedAttempt",
] as const;

const tables = rowStateTables();

/** Writes rows' static records that are not written yet, and puts those rows in the sheet order. */
export const RECORD_STATIC_ROWS = luaScript(new URL("./lua/record-static-rows.lua", import.meta.url));

/** Records rows that are not recorded yet. */
export const INIT_ROWS = luaScript(new URL("./lua/init-rows.lua", import.meta.url), {
  ...HISTORY,
  RECORDED_NOTE_CODE,
});

/** Changes a row's state (forward only, or following its own payment) and fields. */
export const TRANSITION_ROW = luaScript(new URL("./lua/transition-row.lua", import.meta.url), {
  ...HISTORY,
  RANK: tables.RANK,
  TERMINAL: tables.TERMINAL,
  ADOPTABLE_FROM_ERROR: tables.ADOPTABLE_FROM_ERROR,
  GIVE_UP: tables.GIVE_UP,
  FOLLOW: tables.FOLLOW,
  PAYMENT_FINAL: tables.PAYMENT_FINAL,
  SEND_ONLY_FIELDS,
});

/** Reads the same fields (and the static records) of a chunk of rows in one reply. */
export const READ_ROWS = luaScript(new URL("./lua/read-rows.lua", import.meta.url));

/** The send fence, checked right before a POST /payments goes out. */
export const FENCE_SEND = luaScript(new URL("./lua/fence-send.lua", import.meta.url));

/** An operator retry: a new attempt of a row that may be retried. */
export const START_NEW_ATTEMPT = luaScript(new URL("./lua/start-new-attempt.lua", import.meta.url), {
  ...HISTORY,
  RETRYABLE: tables.RETRYABLE,
  NEVER_RETRIED: new Set(NEVER_RETRIED_CODES),
});
