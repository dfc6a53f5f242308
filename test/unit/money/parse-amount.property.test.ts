import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type AmountConvention,
  amountConventionEvidence,
  formatMinor,
  parseAmount,
} from "../../../src/money/index.js";
import {
  amountConventionEvidenceInFull,
  parseAmountTextInFull,
  parsePlainAmountText,
} from "../../../src/money/parse-amount.js";

/** One currency per exponent, plus symbols that belong to it. */
const CURRENCIES = [
  { code: "JPY", exponent: 0, symbol: "¥" },
  { code: "USD", exponent: 2, symbol: "$" },
  { code: "EUR", exponent: 2, symbol: "€" },
  { code: "KWD", exponent: 3, symbol: undefined },
  { code: "CLF", exponent: 4, symbol: undefined },
] as const;

const currency = fc.constantFrom(...CURRENCIES);
const minorAmount = fc.integer({ min: 1, max: 10_000_000_000_000 });

function split(minor: number, exponent: number): { integer: string; fraction: string } {
  const digits = String(minor).padStart(exponent + 1, "0");
  return {
    integer: digits.slice(0, digits.length - exponent),
    fraction: digits.slice(digits.length - exponent),
  };
}

function group(integer: string, separator: string): string {
  return integer.replace(/\B(?=(\d{3})+(?!\d))/g, separator);
}

type Rendering = { text: string; convention: AmountConvention };

/** Every way a sheet may legitimately write the amount, with the convention under which it is unambiguous. */
function renderings(minor: number, exponent: number, symbol: string | undefined, code: string): Rendering[] {
  const { integer, fraction } = split(minor, exponent);
  const dot = exponent > 0 ? `.${fraction}` : "";
  const comma = exponent > 0 ? `,${fraction}` : "";
  const out: Rendering[] = [
    { text: integer + dot, convention: "dot" },
    { text: exponent > 0 ? `${integer}${dot}00` : `${integer}.00`, convention: "dot" }, // zero padding is exact
    { text: group(integer, ",") + dot, convention: "dot" },
    { text: group(integer, " ") + dot, convention: "dot" },
    { text: group(integer, "\u00A0") + comma, convention: "comma" },
    { text: group(integer, "\u202F") + comma, convention: "comma" },
    { text: group(integer, "'") + dot, convention: "dot" },
    { text: group(integer, ".") + comma, convention: "comma" },
    { text: integer + comma, convention: "comma" },
    { text: `${code} ${group(integer, ",")}${dot}`, convention: "dot" },
    { text: `${integer + comma} ${code.toLowerCase()}`, convention: "comma" },
  ];
  if (symbol) {
    out.push({ text: `${symbol}${group(integer, ",")}${dot}`, convention: "dot" });
    out.push({ text: `${group(integer, ".")}${comma} ${symbol}`, convention: "comma" });
  }
  return out;
}

describe("parseAmount properties", () => {
  it("reads every accepted rendering of an amount back to exactly that amount", () => {
    fc.assert(
      fc.property(currency, minorAmount, ({ code, exponent, symbol }, minor) => {
        const expected = { ok: true, minor, normalized: formatMinor(minor, code) };
        for (const { text, convention } of renderings(minor, exponent, symbol, code)) {
          expect(parseAmount(text, code, convention), `${text} (${convention})`).toEqual(expected);
          // Under an unknown or mixed convention a rendering is either read the same or refused as ambiguous.
          for (const unclear of ["unknown", "mixed"] as const) {
            const result = parseAmount(text, code, unclear);
            if (result.ok) expect(result, `${text} (${unclear})`).toEqual(expected);
            else expect(result.code, `${text} (${unclear})`).toBe("AMOUNT_AMBIGUOUS");
          }
        }
        const numeric = Number(`${split(minor, exponent).integer}.${split(minor, exponent).fraction}`);
        expect(parseAmount(numeric, code, "unknown")).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("refuses amounts with more decimals than the currency has", () => {
    fc.assert(
      fc.property(
        currency,
        minorAmount,
        fc.integer({ min: 1, max: 9 }),
        ({ code, exponent }, minor, extra) => {
          const { integer, fraction } = split(minor, exponent);
          const text = `${integer}.${fraction}${extra}`;
          const result = parseAmount(text, code, "dot");
          expect(result.ok ? "accepted" : result.code, text).toBe("AMOUNT_TOO_PRECISE");
          expect(parseAmount(Number(text), code, "dot").ok, `numeric ${text}`).toBe(false);
        },
      ),
    );
  });

  it("refuses wrong grouping, repeated decimal marks and letters inside the number", () => {
    const conventions = fc.constantFrom<AmountConvention>("dot", "comma", "unknown", "mixed");
    const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`));
    const wrongGroup = fc
      .tuple(digits(1, 3), fc.constantFrom(1, 2, 4, 5), fc.constantFrom(",", " ", "'"), digits(2, 2))
      .chain(([head, width, sep, cents]) =>
        digits(width, width).map((middle) => `${head}${sep}${middle}${sep}123.${cents}`),
      );
    const repeatedDecimals = fc
      .tuple(digits(1, 4), digits(1, 2), digits(1, 2), fc.constantFrom(".", ","))
      .map(([a, b, c, mark]) => `${a}${mark}${b}${mark}${c}`);
    const letterInside = fc
      .tuple(digits(1, 5), fc.stringMatching(/^[a-zA-Z]$/), digits(1, 4))
      .map(([a, letter, b]) => `${a}${letter}${b}`);
    fc.assert(
      fc.property(fc.oneof(wrongGroup, repeatedDecimals, letterInside), conventions, (text, convention) => {
        expect(parseAmount(text, "USD", convention).ok, `${text} (${convention})`).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it("never accepts arbitrary text as a value whose digits differ from the text's digits", () => {
    const alphabet = fc.constantFrom(..."0123456789.,' \u00A0-()$€eEabcUSD".split(""));
    fc.assert(
      fc.property(
        fc.array(alphabet, { maxLength: 14 }).map((chars) => chars.join("")),
        fc.constantFrom<AmountConvention>("dot", "comma", "unknown", "mixed"),
        (text, convention) => {
          const result = parseAmount(text, "USD", convention);
          if (!result.ok) return;
          const significant = (s: string) => s.replace(/\D/g, "").replace(/^0+/, "").replace(/0+$/, "");
          expect(significant(result.normalized), text).toBe(significant(text));
          // A value read without a clear convention must mean the same under every convention that reads it.
          if (convention === "unknown" || convention === "mixed") {
            for (const clear of ["dot", "comma"] as const) {
              const other = parseAmount(text, "USD", clear);
              if (other.ok) expect(other.minor, `${text} (${clear})`).toBe(result.minor);
            }
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});

/**
 * The fast paths (plain text like `2864.08`) must read every input exactly as the full parser does: where
 * a fast path answers, the answer is the full parser's; where it declines, `parseAmount` still matches.
 */
describe("fast paths agree with the full reading", () => {
  const conventions = fc.constantFrom<AmountConvention>("dot", "comma", "unknown", "mixed");
  const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`));
  /** Mostly plain amounts, at and beyond the fast path's limits (16+ digits, 3 decimals, leading zeros). */
  const plainish = fc.oneof(
    digits(1, 20),
    fc.tuple(digits(0, 18), digits(0, 6)).map(([a, b]) => `${a}.${b}`),
    fc.tuple(digits(1, 3), digits(3, 3)).map(([a, b]) => `${a}.${b}`),
    fc
      .tuple(digits(1, 16), fc.constantFrom(".", ",", " ", ".0", ",00", "-", " USD", "e5"), digits(0, 4))
      .map(([a, mark, b]) => `${a}${mark}${b}`),
  );
  const anyText = fc
    .array(fc.constantFrom(..."0123456789.,' \u00A0-$€eUSDarsxyz".split("")), { maxLength: 16 })
    .map((chars) => chars.join(""));
  const text = fc.oneof(plainish, anyText);

  it("parsePlainAmountText answers only as parseAmountTextInFull does", () => {
    fc.assert(
      fc.property(text, currency, conventions, (input, { code, exponent }, convention) => {
        const full = parseAmountTextInFull(input, code, exponent, convention);
        const fast = parsePlainAmountText(input, code, exponent, convention);
        if (fast !== undefined) expect(fast, `${input} (${convention})`).toEqual(full);
        expect(parseAmount(input, code, convention), `${input} (${convention})`).toEqual(full);
      }),
      { numRuns: 3000 },
    );
  });

  it("takes the fast path for the plain amounts sheets are full of", () => {
    fc.assert(
      fc.property(minorAmount, currency, conventions, (minor, { code, exponent }, convention) => {
        const { integer, fraction } = split(minor, exponent);
        const input = exponent > 0 ? `${integer}.${fraction}` : integer;
        const plainReading = convention !== "comma" || exponent === 0;
        const ambiguous = convention !== "dot" && /^[1-9][0-9]{0,2}\.[0-9]{3}$/.test(input);
        const fast = parsePlainAmountText(input, code, exponent, convention);
        if (plainReading && !ambiguous && integer.length <= 15) {
          expect(fast, `${input} (${convention})`).toEqual({
            ok: true,
            minor,
            normalized: formatMinor(minor, code),
          });
        } else {
          expect(fast, `${input} (${convention})`).toBeUndefined();
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("amountConventionEvidence answers as its full reading does", () => {
    fc.assert(
      fc.property(text, (input) => {
        expect(amountConventionEvidence(input), input).toBe(amountConventionEvidenceInFull(input));
      }),
      { numRuns: 3000 },
    );
  });
});
