/**
 * How a row's state hash stores the fields a finished row keeps, compactly, because a finished row
 * lives in Redis as long as its batch (the fees' JSON, an ISO time and a payment id repeated in its
 * history would be most of it). Each encoding reads back exactly what was written
 * (docs/performance.md: what the compact forms save):
 *
 * - times (`updatedAt`, history lines, `paymentUpdatedAt`): base-36 milliseconds, 8 characters where
 *   an ISO time takes 24. A payment time that would not read back the same as a stamp is kept as
 *   its text (escaped with `=` when it has no `-` or `:`).
 * - `fees`: `<currency>|<type>:<amount>:<o|r>[:<currency>],...` (`o` originator, `r` receiver; an
 *   item's currency only when it differs from the first's); the row-changing script drops the leading
 *   `<currency>|` when it is the row's own currency, so a USD row's fees read `rail:150:o,...`. Fees
 *   that do not fit the form exactly are kept as JSON (`[...]`).
 * - history notes: a note naming the payment the same change records (`payment created: pay_...`)
 *   stores U+0001 in its place; JSON.stringify never leaves that character raw in a note, so it can
 *   only be this mark. Before the row's `paymentId` changes or goes (a new attempt), the scripts put
 *   the old id back into the lines that hold the mark (lua/row-history.lua), so the mark always means
 *   the row's current payment.
 * - the notes every paid row gets (`recorded`, `payment created: `, `reconciled: payment `...) by a
 *   code: `~<letter><rest>`, where the letter stands for the note's usual beginning and `<rest>` is
 *   the remainder as it appears inside the JSON string (mark included). A stored note starting with
 *   `~` can only be a code, since JSON text never does. About 55 B of a paid row's 3 history lines.
 *
 * A change to any of these forms is a new Redis layout (src/redis/layout-version.ts).
 */
import type { Fee } from "../payouts-api/wire-types.js";

/** A time as a row's state hash keeps it: milliseconds in base 36 (see {@link isoOfStamp}). */
export function rowStamp(at: Date): string {
  return at.getTime().toString(36);
}

/**
 * The ISO time of a stamp; a payment time kept as text (it holds `-` or `:`, or is escaped with `=`
 * by {@link encodePaymentTime}) comes back as it was.
 */
export function isoOfStamp(text: string): string {
  if (text === "" || /[-:]/.test(text)) return text;
  if (text.startsWith("=")) return text.slice(1);
  const ms = Number.parseInt(text, 36);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : text;
}

/**
 * A payment's time (`createdAt`, `updatedAt`) in the one ISO form rows store and compare (the Lua
 * scripts compare times as milliseconds, or as text when a time does not parse).
 */
export function normalisedPaymentTime(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : new Date(ms).toISOString();
}

/**
 * A payment's `updatedAt` (normalised with toISOString) as a stamp, when the stamp reads back to the
 * very same text; anything else is stored as it is (escaped with `=` if it has no `-` or `:`, so it
 * cannot be taken for a stamp).
 */
export function encodePaymentTime(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isFinite(ms) && ms >= 0 && new Date(ms).toISOString() === iso) return ms.toString(36);
  return /[-:]/.test(iso) || iso === "" ? iso : `=${iso}`;
}

const FEE_KEYS = ["type", "amount", "currency", "chargeTo"] as const;
const CHARGE_TO_CODE: Readonly<Record<string, string>> = { originator: "o", receiver: "r" };
const CHARGE_TO_OF_CODE: Readonly<Record<string, Fee["chargeTo"]>> = { o: "originator", r: "receiver" };

/** Whether a fee reads back identically (same keys in the same order, same values) from the short form. */
function fitsShortForm(fee: Fee): boolean {
  const keys = Object.keys(fee);
  return (
    keys.length === FEE_KEYS.length &&
    keys.every((k, i) => k === FEE_KEYS[i]) &&
    typeof fee.type === "string" &&
    /^[A-Za-z0-9_.-]+$/.test(fee.type) &&
    Number.isSafeInteger(fee.amount) &&
    fee.amount >= 0 &&
    !Object.is(fee.amount, -0) &&
    /^[A-Z]{3}$/.test(fee.currency) &&
    CHARGE_TO_CODE[fee.chargeTo] !== undefined
  );
}

/** A payment's fees for the row hash: the short form, or JSON when any item does not fit it. */
export function encodeFees(fees: readonly Fee[]): string {
  const first = fees[0];
  if (!first || !fees.every(fitsShortForm)) return JSON.stringify(fees);
  const items = fees.map((fee) => {
    const item = `${fee.type}:${fee.amount}:${CHARGE_TO_CODE[fee.chargeTo]}`;
    return fee.currency === first.currency ? item : `${item}:${fee.currency}`;
  });
  return `${first.currency}|${items.join(",")}`;
}

/** The fees as stored (short form, with or without its currency, or JSON), for a row in `rowCurrency`. */
export function decodeFees(text: string, rowCurrency: string | undefined): Fee[] {
  if (text.startsWith("[")) return JSON.parse(text) as Fee[];
  const bar = text.indexOf("|");
  const currency = bar >= 0 ? text.slice(0, bar) : (rowCurrency ?? "");
  return text
    .slice(bar + 1)
    .split(",")
    .map((item) => {
      const [type = "", amount = "", code = "", itemCurrency] = item.split(":");
      const chargeTo = CHARGE_TO_OF_CODE[code];
      if (!chargeTo || !/^\d+$/.test(amount)) throw new Error(`unreadable stored fee "${item}"`);
      return { type, amount: Number(amount), currency: itemCurrency ?? currency, chargeTo };
    });
}

/** Stands for the row's payment id in a stored history note (see the module comment). */
export const PAYMENT_ID_MARK = "\u0001";

/**
 * The usual beginnings of history notes, by code letter (see the module comment). Letters are never
 * reused for another text: rows stored with a code must read the same after any upgrade. Longest
 * first where one begins another, so the encoder picks the longest that fits.
 */
const NOTE_CODES: ReadonlyArray<readonly [code: string, start: string]> = [
  ["r", "recorded"],
  ["c", "payment created: "],
  ["p", "reconciled: payment "],
  ["a", "adopted our earlier payment: "],
  ["e", "an earlier attempt's payment exists: "],
  ["q", "fx quote stored"],
];
const NOTE_START_OF_CODE: ReadonlyMap<string, string> = new Map(NOTE_CODES);
/** How the Lua scripts write the note of a newly recorded row (lua/init-rows.lua). */
export const RECORDED_NOTE_CODE = "~r";

/** A note as a history line stores it: JSON, the payment id this change records replaced by the mark. */
export function encodeNote(note: string | undefined, paymentId: string | null | undefined): string {
  let json = note === undefined ? "null" : JSON.stringify(note);
  if (paymentId) json = json.split(JSON.stringify(paymentId).slice(1, -1)).join(PAYMENT_ID_MARK);
  if (note === undefined) return json;
  for (const [code, start] of NOTE_CODES) {
    // The start as it appears inside the JSON string (these starts need no escaping).
    if (json.startsWith(`"${start}`)) return `~${code}${json.slice(start.length + 1, -1)}`;
  }
  return json;
}

/** A stored note back as written: the mark replaced by the row's payment id. */
export function decodeNote(stored: string, paymentId: string | undefined): string | null {
  // Without a payment id (the scripts never leave the mark then) the mark reads as the character it
  // is, rather than making the whole row unreadable.
  const id = paymentId === undefined ? "\\u0001" : JSON.stringify(paymentId).slice(1, -1);
  let json = stored.includes(PAYMENT_ID_MARK) ? stored.split(PAYMENT_ID_MARK).join(id) : stored;
  if (json.startsWith("~")) {
    const start = NOTE_START_OF_CODE.get(json.charAt(1));
    if (start === undefined) throw new Error(`unreadable stored note code "${json.slice(0, 2)}"`);
    json = `"${start}${json.slice(2)}"`;
  }
  return JSON.parse(json || "null") as string | null;
}
