/**
 * Reading an amount from a sheet cell into integer minor units. Amounts are never guessed.
 *
 * Rules (copied to the README):
 * - A numeric cell is read at the 15 significant digits Excel shows (`0.1+0.2` is "0.3"), then must fit
 *   the currency's exponent exactly: `12.345` USD is AMOUNT_TOO_PRECISE, never rounded. Trailing zeros
 *   beyond the exponent are exact and accepted (`5000.00` JPY is 5000).
 * - Text is trimmed. One currency decoration is allowed before or after the number: the row's ISO code
 *   (`USD 12.00`, `12.00 usd`) or a symbol of that currency (`$12.00`, `12,00 €`). A code or symbol of
 *   another currency is AMOUNT_CURRENCY_MISMATCH.
 * - Decimal mark and thousands separators: a value with both `,` and `.` uses the last one as the decimal
 *   mark (`1,234.56`, `1.234,56`). Thousands separators are `,` `.` space, no-break space, narrow no-break
 *   space, thin space, `'` or `’`, one kind per value, in groups of exactly 3 digits (`1,23,456` is
 *   refused). A single `,` or `.` followed by exactly three digits (`1,234`, `1.234`) is read by the
 *   sheet's convention ("dot": `.` is the decimal mark; "comma": `,` is) and is AMOUNT_AMBIGUOUS when the
 *   convention is "unknown" or "mixed". A value that contradicts the sheet's convention (`1.234,56` in a
 *   "dot" sheet) is AMOUNT_INVALID.
 * - Errors, each with its own code: blank → AMOUNT_MISSING; `-12.00`, `12.00-` → AMOUNT_NEGATIVE; zero →
 *   AMOUNT_ZERO; `(12.00)` (accounting negative), `1e5` (scientific notation in text), letters, `+12`,
 *   several decimal marks or bad grouping → AMOUNT_INVALID; more than Number.MAX_SAFE_INTEGER minor units
 *   → AMOUNT_TOO_LARGE; unknown currency code → CURRENCY_UNKNOWN.
 *
 * The convention is decided once per sheet (see `AmountConventionTally`): a `;`-delimited CSV or a value
 * whose comma can only be a decimal comma (`12,5`, `1.234,56`) is evidence for "comma"; a value like
 * `1,234.56` or `12.5` is evidence for "dot"; evidence both ways makes the sheet "mixed".
 */
import { CURRENCY_SYMBOLS, currencyExponent } from "./currencies.js";
import { excelNumberText } from "./excel-number.js";

/** How a sheet writes its decimal mark. "mixed" means contradictory evidence: only self-evident values parse. */
export type AmountConvention = "dot" | "comma" | "unknown" | "mixed";

export type AmountErrorCode =
  | "AMOUNT_MISSING"
  | "AMOUNT_INVALID"
  | "AMOUNT_NEGATIVE"
  | "AMOUNT_ZERO"
  | "AMOUNT_TOO_PRECISE"
  | "AMOUNT_TOO_LARGE"
  | "AMOUNT_AMBIGUOUS"
  | "AMOUNT_CURRENCY_MISMATCH"
  | "CURRENCY_UNKNOWN";

export type ParsedAmount =
  | {
      ok: true /** integer minor units, a safe integer */;
      minor: number /** major units, e.g. "1250.00" */;
      normalized: string;
    }
  | { ok: false; code: AmountErrorCode; message: string };

type Failure = Extract<ParsedAmount, { ok: false }>;

const fail = (code: AmountErrorCode, message: string): Failure => ({ ok: false, code, message });

const SPACE_SEPARATORS = " \u00A0\u202F\u2009";
const APOSTROPHE_SEPARATORS = "'\u2019";
const NUMERIC_BODY = /^[0-9.,'\u2019 \u00A0\u202F\u2009]+$/;
const MINUS_SIGNS = ["-", "\u2212"];

/** Parses a cell's amount (text or number) in `currency` into minor units. */
export function parseAmount(
  input: string | number,
  currency: string,
  convention: AmountConvention = "unknown",
): ParsedAmount {
  const code = currency.trim().toUpperCase();
  const exponent = currencyExponent(code);
  if (exponent === undefined) {
    return fail("CURRENCY_UNKNOWN", `"${currency}" is not an ISO 4217 currency code`);
  }
  if (typeof input === "number") {
    if (!Number.isFinite(input)) return fail("AMOUNT_INVALID", "the amount is not a finite number");
    const plain = excelNumberText(input);
    const negative = plain.startsWith("-");
    const [integerPart = "0", fractionPart = ""] = plain.replace("-", "").split(".");
    return toMinor(integerPart, fractionPart, negative, code, exponent, plain);
  }
  return parseAmountText(input, code, exponent, convention);
}

function parseAmountText(
  input: string,
  currency: string,
  exponent: number,
  convention: AmountConvention,
): ParsedAmount {
  const original = input.trim();
  if (original === "") return fail("AMOUNT_MISSING", "the amount is blank");
  if (/[()]/.test(original)) {
    return fail(
      "AMOUNT_INVALID",
      `"${original}": parentheses mark a negative amount in accounting; a payout amount must be positive`,
    );
  }
  let text = original;
  let negative = false;
  const stripSign = (): void => {
    const first = text[0] ?? "";
    const last = text[text.length - 1] ?? "";
    if (MINUS_SIGNS.includes(first)) {
      negative = true;
      text = text.slice(1).trim();
    } else if (MINUS_SIGNS.includes(last)) {
      negative = true; // SAP and some ERPs write the minus sign after the number
      text = text.slice(0, -1).trim();
    }
  };
  stripSign();
  const decoration = stripCurrency(text, currency);
  if (!decoration.ok) return decoration;
  text = decoration.rest;
  if (!negative) stripSign();
  if (text.startsWith("+"))
    return fail("AMOUNT_INVALID", `"${original}": write the amount without a plus sign`);
  if (/^[0-9]*[.,]?[0-9]*e[+-]?[0-9]+$/i.test(text) && /[0-9]/.test(text)) {
    return fail(
      "AMOUNT_INVALID",
      `"${original}" is in scientific notation; write the amount out in full (e.g. 100000.00)`,
    );
  }
  if (text === "" || !NUMERIC_BODY.test(text) || !/[0-9]/.test(text)) {
    return fail("AMOUNT_INVALID", `"${original}" is not an amount`);
  }
  const split = splitDecimal(text, convention, original);
  if (!split.ok) return split;
  return toMinor(split.integerDigits, split.fractionDigits, negative, currency, exponent, original);
}

type Decoration = { ok: true; rest: string } | Failure;

/** Removes one currency code or symbol before or after the number; it must belong to `currency`. */
function stripCurrency(text: string, currency: string): Decoration {
  const codeMatch = /^([A-Za-z]{3})\s*(.*)$/s.exec(text) ?? /^(.*?)\s*([A-Za-z]{3})$/s.exec(text);
  if (codeMatch) {
    const [, a = "", b = ""] = codeMatch;
    const [candidate, rest] = /^[A-Za-z]{3}$/.test(a) && !/^[A-Za-z]{3}$/.test(b) ? [a, b] : [b, a];
    const upper = candidate.toUpperCase();
    if (currencyExponent(upper) !== undefined) {
      if (upper !== currency) {
        return fail(
          "AMOUNT_CURRENCY_MISMATCH",
          `"${text}" is written in ${upper} but the row's currency is ${currency}`,
        );
      }
      return { ok: true, rest: rest.trim() };
    }
  }
  for (const [symbol, codes] of CURRENCY_SYMBOLS) {
    const lower = text.toLowerCase();
    const symbolLower = symbol.toLowerCase();
    let rest: string | undefined;
    if (lower.startsWith(symbolLower)) rest = text.slice(symbol.length);
    else if (lower.endsWith(symbolLower)) rest = text.slice(0, text.length - symbol.length);
    if (rest === undefined) continue;
    if (!codes.includes(currency)) {
      return fail(
        "AMOUNT_CURRENCY_MISMATCH",
        `"${text}" carries the symbol ${symbol} (${codes.join("/")}) but the row's currency is ${currency}`,
      );
    }
    return { ok: true, rest: rest.trim() };
  }
  return { ok: true, rest: text };
}

type DecimalSplit = { ok: true; integerDigits: string; fractionDigits: string } | Failure;

function separatorKind(ch: string): string {
  if (SPACE_SEPARATORS.includes(ch)) return "space";
  if (APOSTROPHE_SEPARATORS.includes(ch)) return "apostrophe";
  return ch;
}

function splitDecimal(text: string, convention: AmountConvention, original: string): DecimalSplit {
  const commaCount = count(text, ",");
  const dotCount = count(text, ".");
  const hasOtherSeparator = [...text].some(
    (ch) => SPACE_SEPARATORS.includes(ch) || APOSTROPHE_SEPARATORS.includes(ch),
  );
  const conventionMark = convention === "dot" ? "." : convention === "comma" ? "," : undefined;
  let decimalMark: "," | "." | undefined;
  if (commaCount > 0 && dotCount > 0) {
    decimalMark = text.lastIndexOf(",") > text.lastIndexOf(".") ? "," : ".";
    if (conventionMark && decimalMark !== conventionMark) {
      return fail(
        "AMOUNT_INVALID",
        `"${original}" uses "${decimalMark}" as decimal mark but this sheet uses "${conventionMark}"`,
      );
    }
  } else if (commaCount + dotCount > 0) {
    const mark = commaCount > 0 ? "," : ".";
    const markCount = commaCount + dotCount;
    if (markCount > 1) {
      decimalMark = undefined; // repeated: it can only be a thousands separator
      if (conventionMark === mark) {
        return fail("AMOUNT_INVALID", `"${original}" has more than one decimal mark "${mark}"`);
      }
    } else if (conventionMark) {
      decimalMark = conventionMark === mark ? mark : undefined;
      if (!decimalMark && ungroup(text) === undefined) {
        return fail(
          "AMOUNT_INVALID",
          `"${original}": this sheet uses "${conventionMark}" as decimal mark, so "${mark}" can only separate thousands`,
        );
      }
    } else if (hasOtherSeparator) {
      decimalMark = mark; // "1 234,56": spaces group the thousands, so the mark is decimal
    } else {
      const [before = "", after = ""] = text.split(mark);
      const couldBeThousands = after.length === 3 && /^[1-9][0-9]{0,2}$/.test(before);
      if (couldBeThousands) {
        return fail(
          "AMOUNT_AMBIGUOUS",
          `"${original}" could be ${before}${after} or ${before}.${after}: the sheet's decimal mark is unclear; ` +
            `write the decimals out (e.g. ${before}${after}.00) or use a numeric cell`,
        );
      }
      decimalMark = mark;
    }
  }
  const [integerText = "", fractionText = "", ...more] = decimalMark ? text.split(decimalMark) : [text];
  if (more.length > 0) return fail("AMOUNT_INVALID", `"${original}" has more than one decimal mark`);
  if (!/^[0-9]*$/.test(fractionText)) {
    return fail("AMOUNT_INVALID", `"${original}": the decimals must be digits only`);
  }
  const integerDigits = ungroup(integerText);
  if (integerDigits === undefined) {
    return fail(
      "AMOUNT_INVALID",
      `"${original}": thousands separators must group exactly three digits, one kind per amount`,
    );
  }
  if (integerDigits === "" && fractionText === "")
    return fail("AMOUNT_INVALID", `"${original}" is not an amount`);
  return { ok: true, integerDigits: integerDigits || "0", fractionDigits: fractionText };
}

/** Removes thousands separators from an integer part; `undefined` when the grouping is not exactly 3 digits. */
function ungroup(integerText: string): string | undefined {
  if (/^[0-9]*$/.test(integerText)) return integerText;
  const kinds = new Set([...integerText].filter((ch) => !/[0-9]/.test(ch)).map(separatorKind));
  if (kinds.size !== 1) return undefined;
  const groups = integerText.split(/[^0-9]/);
  const [first = "", ...rest] = groups;
  if (!/^[1-9][0-9]{0,2}$/.test(first)) return undefined;
  if (!rest.every((group) => /^[0-9]{3}$/.test(group))) return undefined;
  return groups.join("");
}

function toMinor(
  integerDigits: string,
  fractionDigits: string,
  negative: boolean,
  currency: string,
  exponent: number,
  shown: string,
): ParsedAmount {
  const significantFraction = fractionDigits.replace(/0+$/, "");
  if (significantFraction.length > exponent) {
    return fail(
      "AMOUNT_TOO_PRECISE",
      `"${shown}" has more decimals than ${currency} allows (${exponent}); amounts are never rounded`,
    );
  }
  const minor = BigInt(integerDigits + significantFraction.padEnd(exponent, "0"));
  if (minor === 0n) return fail("AMOUNT_ZERO", `"${shown}" is zero; a payout must be more than zero`);
  if (negative) return fail("AMOUNT_NEGATIVE", `"${shown}" is negative; a payout amount must be positive`);
  if (minor > BigInt(Number.MAX_SAFE_INTEGER)) {
    return fail("AMOUNT_TOO_LARGE", `"${shown}" is too large to pay in one payment`);
  }
  return { ok: true, minor: Number(minor), normalized: formatMinor(minor, currency) };
}

/** Formats integer minor units as an exact major-unit string: `formatMinor(125000, "USD")` → "1250.00". */
export function formatMinor(minor: number | bigint, currency: string): string {
  const exponent = currencyExponent(currency);
  if (exponent === undefined) throw new RangeError(`unknown currency ${currency}`);
  if (typeof minor === "number" && !Number.isSafeInteger(minor)) {
    throw new RangeError(`minor units must be a safe integer, got ${minor}`);
  }
  const value = BigInt(minor);
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(exponent + 1, "0");
  const integerPart = digits.slice(0, digits.length - exponent);
  const fractionPart = digits.slice(digits.length - exponent);
  return `${negative ? "-" : ""}${integerPart}${exponent > 0 ? `.${fractionPart}` : ""}`;
}

function count(text: string, ch: string): number {
  let n = 0;
  for (const c of text) if (c === ch) n++;
  return n;
}

/**
 * What one amount text says about the sheet's decimal mark: "dot", "comma", or null when it says nothing
 * (`1234`, `1,234`, `1.234`). Numeric cells say nothing either.
 */
export function amountConventionEvidence(text: string): "dot" | "comma" | null {
  const core = text.replace(/[^0-9.,]/g, "");
  const commaCount = count(core, ",");
  const dotCount = count(core, ".");
  if (commaCount > 0 && dotCount > 0) return core.lastIndexOf(",") > core.lastIndexOf(".") ? "comma" : "dot";
  if (commaCount + dotCount === 0) return null;
  const mark = commaCount > 0 ? "," : ".";
  if (commaCount + dotCount > 1) return mark === "," ? "dot" : "comma"; // repeated: thousands separator
  const [before = "", after = ""] = core.split(mark);
  const couldBeThousands = after.length === 3 && /^[1-9][0-9]{0,2}$/.test(before);
  if (couldBeThousands) return null;
  return mark === "," ? "comma" : "dot";
}

/** Collects convention evidence over a sheet's amount column and decides its `AmountConvention`. */
export class AmountConventionTally {
  private dot = false;
  private comma = false;

  /** Records evidence from a CSV delimiter (`;` means a decimal-comma locale) or an amount text. */
  addEvidence(evidence: "dot" | "comma" | null): void {
    if (evidence === "dot") this.dot = true;
    if (evidence === "comma") this.comma = true;
  }

  addAmountText(text: string): void {
    this.addEvidence(amountConventionEvidence(text));
  }

  get convention(): AmountConvention {
    if (this.dot && this.comma) return "mixed";
    if (this.dot) return "dot";
    if (this.comma) return "comma";
    return "unknown";
  }
}
