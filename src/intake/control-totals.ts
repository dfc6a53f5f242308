/**
 * Control totals: the sums a sheet vouches for itself, held against what its valid rows add up to.
 *
 * A sheet may end with total rows, as accounting exports do: `Total` (or `Totals`, `Sum`, `Grand
 * total`, optionally followed by a currency code) in its first non-empty cell or in the reference
 * column, with the sum in the amount column (and the currency in the currency column, in the label,
 * or the single currency of the sheet's rows). Such a row is never a payout: a row that names a payee
 * account other than its label is read as a payout, so a real payment can never be mistaken for a total.
 * Totals may also be declared by whoever submits (`--expect-rows`, `--expect-total CUR:amount`).
 *
 * Every check here is pure; validate-sheet.ts feeds it the rows and reports its problems. A mismatch
 * refuses the whole sheet: the sheet is not the one its author meant, and paying part of it would not help.
 */
import { type AmountConvention, currencyExponent, formatMinor, parseAmount } from "../money/index.js";
import type { SheetCell, SheetHeader, SheetRow } from "../sheets/index.js";
import { type Problem, problem } from "./problems.js";
import { headerPlan } from "./row-reader.js";

/** Totals declared by whoever submits: the number of valid rows, and the sum per currency in minor units. */
export interface DeclaredTotals {
  rows?: number;
  amounts?: Record<string, number>;
}

/** A total row as read: its label, its amount cell and the currency it names, if any. */
export interface TotalRow {
  rowNumber: number;
  label: string;
  /** From the currency column or the label; else the single currency of the sheet's rows. */
  currency?: string;
  amount: SheetCell;
  /** The amount cell's address (`D7`) for messages. */
  where: string;
  convention: AmountConvention;
}

/** What the valid rows of a sheet add up to, per currency. */
export type FoundTotals = Map<string, { rows: number; minor: number }>;

const EMPTY_CELL: SheetCell = { text: "", kind: "empty" };

const TOTAL_LABEL = /^(?:grand[\s-]*)?(?:totals?|sum)(?:\s*[:(]?\s*([a-z]{3})\s*\)?)?\s*:?$/i;

/**
 * The total label of `row` when it is a total row: the first non-empty cell, or the reference cell,
 * says `Total`/`Totals`/`Sum`/`Grand total` (with an optional currency code), and the row names no
 * payee account other than that label. Undefined for any other row.
 */
export function totalRowLabel(row: SheetRow, header: SheetHeader): string | undefined {
  const plan = headerPlan(header);
  const textOf = (canonical: string): string => {
    const column = plan.byName.get(canonical);
    return column ? (row.cells[column.key]?.text.trim() ?? "") : "";
  };
  let label: string | undefined;
  for (const column of header.columns) {
    const text = row.cells[column.key]?.text.trim() ?? "";
    if (text === "") continue;
    if (TOTAL_LABEL.test(text)) label = text;
    break;
  }
  if (label === undefined) {
    const reference = textOf("reference");
    if (TOTAL_LABEL.test(reference)) label = reference;
  }
  if (label === undefined) return undefined;
  const payee = textOf("to_account");
  return payee === "" || payee === label ? label : undefined;
}

/** The parts of a total row the check needs. */
export function readTotalRow(row: SheetRow, header: SheetHeader, label: string): TotalRow {
  const plan = headerPlan(header);
  const amountColumn = plan.byName.get("amount");
  const currencyColumn = plan.byName.get("currency");
  const fromLabel = TOTAL_LABEL.exec(label)?.[1]?.toUpperCase();
  const fromCell = currencyColumn ? row.cells[currencyColumn.key]?.text.trim().toUpperCase() : undefined;
  const currency = fromCell || fromLabel || undefined;
  return {
    rowNumber: row.rowNumber,
    label,
    ...(currency ? { currency } : {}),
    amount: (amountColumn ? row.cells[amountColumn.key] : undefined) ?? EMPTY_CELL,
    where: amountColumn ? `cell ${amountColumn.letter}${row.rowNumber}` : `row ${row.rowNumber}`,
    convention: header.amountConvention,
  };
}

/** The total a total row states in `currency`, or why it cannot be read. */
function statedTotal(total: TotalRow, currency: string): { minor: number } | { unreadable: string } {
  const cell = total.amount;
  if (cell.kind === "empty" || cell.text.trim() === "") {
    return { unreadable: `the total row "${total.label}" has no amount in ${total.where}` };
  }
  if (cell.kind === "error") {
    return {
      unreadable: `${total.where} of the total row shows ${cell.text || "an error"} (a formula without a value); recalculate and save the sheet`,
    };
  }
  if (currencyExponent(currency) === undefined) {
    return { unreadable: `the total row's currency "${currency}" is not an ISO 4217 code` };
  }
  const parsed =
    cell.kind === "number" && cell.number !== undefined
      ? parseAmount(cell.number, currency)
      : parseAmount(cell.text, currency, total.convention);
  return parsed.ok
    ? { minor: parsed.minor }
    : { unreadable: `${total.where} of the total row cannot be read: ${parsed.message}` };
}

function shown(minor: number, currency: string): string {
  return `${currency} ${formatMinor(minor, currency)}`;
}

/**
 * Holds the total rows and the declared totals against the valid rows. Returns the problems (none
 * when everything agrees); `invalidRows` only makes the message say why the sums may differ.
 */
export function checkControlTotals(input: {
  found: FoundTotals;
  totalRows: readonly TotalRow[];
  declared?: DeclaredTotals;
  invalidRows: number;
  /** The sheet's header for the amount column's title. */
  amountColumn: string;
}): Problem[] {
  const problems: Problem[] = [];
  const { found, declared } = input;
  const currencies = [...found.keys()].sort();
  const foundMinor = (currency: string) => found.get(currency)?.minor ?? 0;
  const validRows = [...found.values()].reduce((n, t) => n + t.rows, 0);
  const invalidNote =
    input.invalidRows > 0
      ? ` (${input.invalidRows} row(s) are invalid and not counted: correct them, or correct the total)`
      : "";
  const foundText = () =>
    currencies.length === 0 ? "no valid rows" : currencies.map((c) => shown(foundMinor(c), c)).join(", ");

  for (const total of input.totalRows) {
    const currency = total.currency ?? (currencies.length <= 1 ? (currencies[0] ?? "USD") : undefined);
    if (currency === undefined) {
      problems.push(
        problem(
          total.rowNumber,
          input.amountColumn,
          "CONTROL_TOTAL_UNREADABLE",
          `the total row "${total.label}" does not say its currency, and the rows are in ${currencies.join(", ")}; write one total row per currency with its code in the currency column`,
        ),
      );
      continue;
    }
    const stated = statedTotal(total, currency);
    if ("unreadable" in stated) {
      problems.push(
        problem(total.rowNumber, input.amountColumn, "CONTROL_TOTAL_UNREADABLE", stated.unreadable),
      );
    } else if (stated.minor !== foundMinor(currency)) {
      problems.push(
        problem(
          total.rowNumber,
          input.amountColumn,
          "CONTROL_TOTAL_MISMATCH",
          `the total row says ${shown(stated.minor, currency)}, but the valid ${currency} rows add up to ${shown(foundMinor(currency), currency)}${invalidNote}; nothing was paid: correct the rows or the total and submit again`,
        ),
      );
    }
  }
  for (const [currency, minor] of Object.entries(declared?.amounts ?? {})) {
    if (minor !== foundMinor(currency)) {
      problems.push(
        problem(
          null,
          null,
          "CONTROL_TOTAL_MISMATCH",
          `the declared total is ${shown(minor, currency)}, but the valid ${currency} rows add up to ${shown(foundMinor(currency), currency)} (the sheet has ${foundText()})${invalidNote}; nothing was paid: check you submitted the right sheet`,
        ),
      );
    }
  }
  if (declared?.rows !== undefined && declared.rows !== validRows) {
    problems.push(
      problem(
        null,
        null,
        "CONTROL_ROWS_MISMATCH",
        `${declared.rows} rows were declared, but the sheet has ${validRows} valid payout rows${invalidNote}; nothing was paid: check you submitted the right sheet`,
      ),
    );
  }
  return problems;
}

/**
 * A declared total as written on the command line or in a form: `USD:125000.00` (or `USD 125000.00`).
 * The amount is read as a sheet's amount is, by the money parser, with no decimal mark assumed (it is
 * typed before any sheet is read, in whatever locale): `1,234.50` and `1.234,50` are self-evident, a
 * bare `1,234` or `1.234` is refused as ambiguous rather than guessed. Throws an Error saying what is
 * wrong.
 */
export function parseDeclaredTotal(text: string): { currency: string; minor: number } {
  const match = /^\s*([A-Za-z]{3})\s*[:= ]\s*(\S+)\s*$/.exec(text);
  if (!match) {
    throw new Error(`"${text}" is not a declared total; write the currency and the sum, e.g. USD:125000.00`);
  }
  const currency = match[1]!.toUpperCase();
  if (currencyExponent(currency) === undefined) {
    throw new Error(`"${currency}" in "${text}" is not an ISO 4217 currency code`);
  }
  const amount = match[2]!;
  const parsed = parseAmount(amount, currency, "unknown");
  if (!parsed.ok && parsed.code === "AMOUNT_AMBIGUOUS") {
    // The parser's words speak of a sheet's decimal mark; this figure was typed by the reader.
    const whole = parseAmount(amount.replace(/[.,]/, ""), currency, "unknown");
    const example = whole.ok ? ` (e.g. ${currency}:${whole.normalized})` : "";
    throw new Error(
      `"${text}": "${amount}" could be read with either decimal mark; write the decimals out${example}`,
    );
  }
  if (!parsed.ok) throw new Error(`"${text}": ${parsed.message}`);
  return { currency, minor: parsed.minor };
}

/** Declared totals from their written forms (`--expect-total` repeated); a currency given twice is refused. */
export function declaredTotalsOf(
  rows: number | undefined,
  totals: readonly string[],
): DeclaredTotals | undefined {
  if (rows === undefined && totals.length === 0) return undefined;
  if (rows !== undefined && (!Number.isSafeInteger(rows) || rows < 0)) {
    throw new Error(`the expected number of rows must be a whole number of at least 0, not ${rows}`);
  }
  const amounts: Record<string, number> = {};
  for (const text of totals) {
    const { currency, minor } = parseDeclaredTotal(text);
    if (amounts[currency] !== undefined) throw new Error(`the expected total for ${currency} is given twice`);
    amounts[currency] = minor;
  }
  return { ...(rows === undefined ? {} : { rows }), ...(totals.length > 0 ? { amounts } : {}) };
}
