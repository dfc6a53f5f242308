/**
 * Reading an amount from a sheet cell into integer minor units. Amounts are never guessed.
 *
 * Rules (docs/operating.md, "Amount rules", says them for operators):
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
/** A thousands separator other than `,` and `.`: one of SPACE_SEPARATORS or APOSTROPHE_SEPARATORS. */
const OTHER_SEPARATOR = /['\u2019 \u00A0\u202F\u2009]/;
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
  return (
    parsePlainAmountText(input, currency, exponent, convention) ??
    parseAmountTextInFull(input, currency, exponent, convention)
  );
}

/**
 * Plain digits with an optional dot and decimals (`1250`, `2864.08`): the shape almost every text amount
 * in a sheet has. At most 15 integer digits, so the value stays within what a double holds exactly.
 */
const PLAIN_AMOUNT = /^[0-9]{1,15}(?:\.[0-9]+)?$/;

/**
 * The fast path of `parseAmount` for text: reads a plain amount (`PLAIN_AMOUNT`) when its reading does not
 * depend on anything the full parser would look at, and returns `undefined` otherwise (then the full
 * parser decides). A dot is the decimal mark unless the sheet's convention is "comma" (then the full
 * parser refuses it or reads it as a thousands separator) or the value could be a thousands group
 * (`1.234` in a sheet whose convention is unclear is AMOUNT_AMBIGUOUS). Exported for the property tests
 * that hold it to `parseAmountTextInFull` on every input; callers use `parseAmount`.
 */
export function parsePlainAmountText(
  input: string,
  currency: string,
  exponent: number,
  convention: AmountConvention,
): ParsedAmount | undefined {
  if (!PLAIN_AMOUNT.test(input)) return undefined;
  const dot = input.indexOf(".");
  if (dot < 0) return toMinor(input, "", false, currency, exponent, input);
  if (convention === "comma") return undefined;
  const integerDigits = input.slice(0, dot);
  const fractionDigits = input.slice(dot + 1);
  if (convention !== "dot" && couldBeThousands(integerDigits, fractionDigits)) return undefined;
  // The usual shape, exactly the currency's decimals and no leading zero (`2864.08`): the text is already
  // the normalized amount, and at most 15 digits make an exact double.
  if (
    fractionDigits.length === exponent &&
    integerDigits.length + exponent <= 15 &&
    (integerDigits.length === 1 || integerDigits.charCodeAt(0) !== 0x30)
  ) {
    const minor = Number(integerDigits + fractionDigits);
    if (minor > 0) return { ok: true, minor, normalized: input };
  }
  return toMinor(integerDigits, fractionDigits, false, currency, exponent, input);
}

/**
 * `1,234` or `1.234`: one mark followed by exactly three digits, after one to three digits that do not
 * start with 0, reads as a thousands group as well as a decimal amount.
 */
function couldBeThousands(before: string, after: string): boolean {
  return after.length === 3 && /^[1-9][0-9]{0,2}$/.test(before);
}

/**
 * The full reading of a text amount: signs, currency decorations, separators and the sheet's convention.
 * Exported for the property tests that compare the fast path with it; callers use `parseAmount`.
 */
export function parseAmountTextInFull(
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

/**
 * A three-letter code at the start or the end of the text, standing alone: `USD 12`, `12.00usd`. The
 * letters next to it must not be letters too, so the end of a word (`12 dollars`, `5 pesos`) is not read
 * as a code (ARS, SOS).
 */
const LEADING_CODE = /^([A-Za-z]{3})(?![A-Za-z])\s*(.*)$/s;
const TRAILING_CODE = /^(.*?)\s*(?<![A-Za-z])([A-Za-z]{3})$/s;
const THREE_LETTERS = /^[A-Za-z]{3}$/;

/** The symbols lower-cased once (matching is case-insensitive: `KR`, `Kr`, `kr`). */
const SYMBOLS_LOWER = CURRENCY_SYMBOLS.map(
  ([symbol, codes]) => [symbol, symbol.toLowerCase(), codes] as const,
);

function isAsciiLetter(charCode: number): boolean {
  const lower = charCode | 0x20;
  return lower >= 0x61 && lower <= 0x7a;
}

/** Removes one currency code or symbol before or after the number; it must belong to `currency`. */
function stripCurrency(text: string, currency: string): Decoration {
  // A code needs a letter at the start or the end; checking that first spares the regexes for most text.
  const codeMatch =
    isAsciiLetter(text.charCodeAt(0)) || isAsciiLetter(text.charCodeAt(text.length - 1))
      ? (LEADING_CODE.exec(text) ?? TRAILING_CODE.exec(text))
      : null;
  if (codeMatch) {
    const [, a = "", b = ""] = codeMatch;
    const [candidate, rest] = THREE_LETTERS.test(a) && !THREE_LETTERS.test(b) ? [a, b] : [b, a];
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
  const lower = text.toLowerCase();
  for (const [symbol, symbolLower, codes] of SYMBOLS_LOWER) {
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
  const hasOtherSeparator = OTHER_SEPARATOR.test(text);
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
      if (couldBeThousands(before, after)) {
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
  let significantEnd = fractionDigits.length;
  while (significantEnd > 0 && fractionDigits.charCodeAt(significantEnd - 1) === 0x30) significantEnd--;
  const significantFraction = fractionDigits.slice(0, significantEnd);
  if (significantFraction.length > exponent) {
    return fail(
      "AMOUNT_TOO_PRECISE",
      `"${shown}" has more decimals than ${currency} allows (${exponent}); amounts are never rounded`,
    );
  }
  const digits = integerDigits + significantFraction.padEnd(exponent, "0");
  // Up to 15 digits are below 2^53, so a double holds them exactly; longer ones go through BigInt.
  const minor = digits.length <= 15 ? Number(digits) : BigInt(digits);
  if (minor === 0 || minor === 0n) {
    return fail("AMOUNT_ZERO", `"${shown}" is zero; a payout must be more than zero`);
  }
  if (negative) return fail("AMOUNT_NEGATIVE", `"${shown}" is negative; a payout amount must be positive`);
  if (minor > Number.MAX_SAFE_INTEGER) {
    return fail("AMOUNT_TOO_LARGE", `"${shown}" is too large to pay in one payment`);
  }
  const safe = Number(minor);
  return { ok: true, minor: safe, normalized: formatMinorIn(safe, exponent) };
}

/** Formats integer minor units as an exact major-unit string: `formatMinor(125000, "USD")` → "1250.00". */
export function formatMinor(minor: number | bigint, currency: string): string {
  const exponent = currencyExponent(currency);
  if (exponent === undefined) throw new RangeError(`unknown currency ${currency}`);
  if (typeof minor === "number" && !Number.isSafeInteger(minor)) {
    throw new RangeError(`minor units must be a safe integer, got ${minor}`);
  }
  return formatMinorIn(minor, exponent);
}

function formatMinorIn(minor: number | bigint, exponent: number): string {
  const negative = minor < 0;
  // A safe integer prints its exact digits as a number; BigInt only for bigint input.
  const magnitude = typeof minor === "number" ? Math.abs(minor) : negative ? -minor : minor;
  const digits = magnitude.toString().padStart(exponent + 1, "0");
  const integerPart = digits.slice(0, digits.length - exponent);
  const fractionPart = digits.slice(digits.length - exponent);
  return `${negative ? "-" : ""}${integerPart}${exponent > 0 ? `.${fractionPart}` : ""}`;
}

function count(text: string, ch: string): number {
  let n = 0;
  for (let i = text.indexOf(ch); i >= 0; i = text.indexOf(ch, i + 1)) n++;
  return n;
}

/**
 * What one amount text says about the sheet's decimal mark: "dot", "comma", or null when it says nothing
 * (`1234`, `1,234`, `1.234`). Numeric cells say nothing either.
 */
export function amountConventionEvidence(text: string): "dot" | "comma" | null {
  // Fast path for plain amounts (`2864.08`, `1250`): the same answer as the full reading below.
  if (PLAIN_EVIDENCE.test(text)) {
    const dot = text.indexOf(".");
    if (dot < 0 || couldBeThousands(text.slice(0, dot), text.slice(dot + 1))) return null;
    return "dot";
  }
  return amountConventionEvidenceInFull(text);
}

/** Digits with at most one dot and no other character: nothing for the full reading to strip. */
const PLAIN_EVIDENCE = /^[0-9]*\.?[0-9]*$/;

/** The full reading behind `amountConventionEvidence`; exported for the property tests of its fast path. */
export function amountConventionEvidenceInFull(text: string): "dot" | "comma" | null {
  // A symbol's own dot (`Fr.`, `kr.`) is not a decimal mark: drop the decoration before counting marks.
  const core = withoutDecoration(text.trim()).replace(/[^0-9.,]/g, "");
  const commaCount = count(core, ",");
  const dotCount = count(core, ".");
  if (commaCount > 0 && dotCount > 0) return core.lastIndexOf(",") > core.lastIndexOf(".") ? "comma" : "dot";
  if (commaCount + dotCount === 0) return null;
  const mark = commaCount > 0 ? "," : ".";
  if (commaCount + dotCount > 1) return mark === "," ? "dot" : "comma"; // repeated: thousands separator
  const [before = "", after = ""] = core.split(mark);
  if (couldBeThousands(before, after)) return null;
  return mark === "," ? "comma" : "dot";
}

/** The text without one leading or trailing currency code or symbol, whichever currency it names. */
function withoutDecoration(text: string): string {
  const code = LEADING_CODE.exec(text) ?? TRAILING_CODE.exec(text);
  if (code) {
    const [, a = "", b = ""] = code;
    const [candidate, rest] = THREE_LETTERS.test(a) && !THREE_LETTERS.test(b) ? [a, b] : [b, a];
    if (currencyExponent(candidate.toUpperCase()) !== undefined) return rest;
  }
  const lower = text.toLowerCase();
  for (const [symbol, symbolLower] of SYMBOLS_LOWER) {
    if (lower.startsWith(symbolLower)) return text.slice(symbol.length);
    if (lower.endsWith(symbolLower)) return text.slice(0, text.length - symbol.length);
  }
  return text;
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
    // Once the evidence goes both ways the sheet is "mixed" whatever follows: skip reading the rest.
    if (this.dot && this.comma) return;
    this.addEvidence(amountConventionEvidence(text));
  }

  get convention(): AmountConvention {
    if (this.dot && this.comma) return "mixed";
    if (this.dot) return "dot";
    if (this.comma) return "comma";
    return "unknown";
  }
}

/**
 * {@link formatMinor}, or the minor units as they are for a currency we do not know (what a view of
 * stored rows shows rather than failing on one odd row).
 */
export function formatMinorOrRaw(minor: number, currency: string): string {
  try {
    return formatMinor(minor, currency);
  } catch {
    return String(minor);
  }
}
