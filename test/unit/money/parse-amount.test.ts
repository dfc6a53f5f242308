import { describe, expect, it } from "vitest";
import {
  AmountConventionTally,
  amountConventionEvidence,
  currencyExponent,
  excelNumberText,
  formatMinor,
  isLossyInteger,
  knownCurrencyCodes,
  parseAmount,
} from "../../../src/money/index.js";

const ok = (minor: number, normalized: string) => ({ ok: true, minor, normalized });

describe("currencyExponent", () => {
  it("knows the minor units of zero-, two-, three- and four-decimal currencies", () => {
    expect(currencyExponent("JPY")).toBe(0);
    expect(currencyExponent("KRW")).toBe(0);
    expect(currencyExponent("usd")).toBe(2);
    expect(currencyExponent("EUR")).toBe(2);
    expect(currencyExponent("KWD")).toBe(3);
    expect(currencyExponent("BHD")).toBe(3);
    expect(currencyExponent("CLF")).toBe(4);
  });

  it("returns undefined for codes that are not active ISO 4217 codes", () => {
    expect(currencyExponent("XYZ")).toBeUndefined();
    expect(currencyExponent("US")).toBeUndefined();
    expect(currencyExponent("HRK")).toBeUndefined(); // replaced by EUR in 2023
  });

  it("lists well over a hundred active codes, all three upper-case letters", () => {
    const codes = knownCurrencyCodes();
    expect(codes.length).toBeGreaterThan(150);
    expect(codes.every((c) => /^[A-Z]{3}$/.test(c))).toBe(true);
  });
});

describe("excelNumberText", () => {
  it("shows numbers at Excel's 15 significant digits, without exponent", () => {
    expect(excelNumberText(0.1 + 0.2)).toBe("0.3");
    expect(excelNumberText(1250)).toBe("1250");
    expect(excelNumberText(12.345)).toBe("12.345");
    expect(excelNumberText(1e21)).toBe("1000000000000000000000");
    expect(excelNumberText(1.5e-7)).toBe("0.00000015");
    expect(excelNumberText(-0)).toBe("0");
    expect(excelNumberText(Number("1234567890123456789"))).toBe("1234567890123460000");
  });

  it("flags integers with more than 15 digits as already destroyed by Excel", () => {
    expect(isLossyInteger(Number("1234567890123456789"))).toBe(true);
    expect(isLossyInteger(999999999999999)).toBe(false);
    expect(isLossyInteger(1234.5)).toBe(false);
  });
});

describe("parseAmount: numeric cells", () => {
  it("reads a formula artefact at the precision Excel displays", () => {
    expect(parseAmount(0.1 + 0.2, "USD")).toEqual(ok(30, "0.30"));
  });

  it("refuses more decimals than the currency has instead of rounding", () => {
    expect(parseAmount(12.345, "USD")).toMatchObject({ ok: false, code: "AMOUNT_TOO_PRECISE" });
    expect(parseAmount(12.5, "JPY")).toMatchObject({ ok: false, code: "AMOUNT_TOO_PRECISE" });
    expect(parseAmount(12.345, "KWD")).toEqual(ok(12345, "12.345"));
  });

  it("refuses zero, negative, non-finite and too-large numbers with distinct codes", () => {
    expect(parseAmount(0, "USD")).toMatchObject({ ok: false, code: "AMOUNT_ZERO" });
    expect(parseAmount(-5, "USD")).toMatchObject({ ok: false, code: "AMOUNT_NEGATIVE" });
    expect(parseAmount(Number.NaN, "USD")).toMatchObject({ ok: false, code: "AMOUNT_INVALID" });
    expect(parseAmount(1e14, "USD")).toMatchObject({ ok: false, code: "AMOUNT_TOO_LARGE" });
  });

  it("refuses an unknown currency", () => {
    expect(parseAmount(5, "XYZ")).toMatchObject({ ok: false, code: "CURRENCY_UNKNOWN" });
  });
});

describe("parseAmount: text", () => {
  it.each([
    ["1250.00", "USD", "unknown", 125000],
    ["1250", "USD", "unknown", 125000],
    ["  1250.5 ", "USD", "unknown", 125050],
    ["1,234.56", "USD", "unknown", 123456],
    ["1.234,56", "EUR", "unknown", 123456],
    ["1 234,56", "EUR", "unknown", 123456],
    ["1\u00A0234,56", "EUR", "comma", 123456],
    ["1\u202F234,56", "EUR", "comma", 123456],
    ["1'234.56", "CHF", "unknown", 123456],
    ["1’234.56", "CHF", "unknown", 123456],
    ["1,234,567", "USD", "unknown", 123456700],
    ["1,234", "USD", "dot", 123400],
    ["1.234", "EUR", "comma", 123400],
    ["12,5", "EUR", "unknown", 1250],
    ["$12.00", "USD", "unknown", 1200],
    ["$ 12.00", "CAD", "unknown", 1200],
    ["12,00 €", "EUR", "comma", 1200],
    ["€1.234,56", "EUR", "comma", 123456],
    ["USD 12", "USD", "unknown", 1200],
    ["12.00 usd", "USD", "unknown", 1200],
    ["¥5000", "JPY", "unknown", 5000],
    ["5000.00", "JPY", "unknown", 5000],
    ["1.234", "KWD", "dot", 1234],
    ["R$ 1.234,56", "BRL", "unknown", 123456],
    [".50", "USD", "unknown", 50],
  ] as const)("%s in %s (%s) is %d minor units", (text, currency, convention, minor) => {
    const result = parseAmount(text, currency, convention);
    expect(result).toMatchObject({ ok: true, minor });
  });

  it.each([
    ["", "AMOUNT_MISSING"],
    ["   ", "AMOUNT_MISSING"],
    ["0", "AMOUNT_ZERO"],
    ["0.00", "AMOUNT_ZERO"],
    ["-12.00", "AMOUNT_NEGATIVE"],
    ["−12.00", "AMOUNT_NEGATIVE"],
    ["12.00-", "AMOUNT_NEGATIVE"],
    ["-$12.00", "AMOUNT_NEGATIVE"],
    ["(12.00)", "AMOUNT_INVALID"],
    ["1e5", "AMOUNT_INVALID"],
    ["1.5E+3", "AMOUNT_INVALID"],
    ["+12", "AMOUNT_INVALID"],
    ["12..00", "AMOUNT_INVALID"],
    ["12.00.00", "AMOUNT_INVALID"],
    ["1,23,456.00", "AMOUNT_INVALID"],
    ["1,2345.00", "AMOUNT_INVALID"],
    ["1 234,567.00", "AMOUNT_INVALID"],
    ["12a", "AMOUNT_INVALID"],
    ["abc", "AMOUNT_INVALID"],
    ["12.345", "AMOUNT_AMBIGUOUS"],
    ["1,234", "AMOUNT_AMBIGUOUS"],
    ["12.341", "AMOUNT_AMBIGUOUS"],
    ["12.3456", "AMOUNT_TOO_PRECISE"],
    ["€12.00", "AMOUNT_CURRENCY_MISMATCH"],
    ["EUR 12.00", "AMOUNT_CURRENCY_MISMATCH"],
    ["90071992547409.92", "AMOUNT_TOO_LARGE"],
  ] as const)("%j in USD is refused with %s", (text, code) => {
    const result = parseAmount(text, "USD", "unknown");
    expect(result).toMatchObject({ ok: false, code });
    if (!result.ok) expect(result.message.length).toBeGreaterThan(5);
  });

  it("refuses values that contradict the sheet's convention", () => {
    expect(parseAmount("1.234,56", "EUR", "dot")).toMatchObject({ ok: false, code: "AMOUNT_INVALID" });
    expect(parseAmount("1,234.56", "USD", "comma")).toMatchObject({ ok: false, code: "AMOUNT_INVALID" });
    expect(parseAmount("12.5", "USD", "comma")).toMatchObject({ ok: false, code: "AMOUNT_INVALID" });
    expect(parseAmount("1,234", "USD", "comma")).toMatchObject({ ok: false, code: "AMOUNT_TOO_PRECISE" });
  });

  it("does not read the end or start of a word as a currency code", () => {
    // "dollars" ends in ARS and "pesos" in SOS: neither names a currency, so the text is just not an amount.
    for (const [text, currency] of [
      ["12 dollars", "USD"],
      ["5 pesos", "MXN"],
      ["usdollars 5", "USD"],
    ] as const) {
      const result = parseAmount(text, currency, "unknown");
      expect(result, text).toMatchObject({ ok: false, code: "AMOUNT_INVALID" });
      if (!result.ok) expect(result.message, text).toBe(`"${text}" is not an amount`);
    }
    // A code standing alone, before or after the number, is still read.
    expect(parseAmount("12 ARS", "ARS", "unknown")).toMatchObject({ ok: true, minor: 1200 });
    expect(parseAmount("12ars", "ARS", "unknown")).toMatchObject({ ok: true, minor: 1200 });
    expect(parseAmount("SOS 5", "SOS", "unknown")).toMatchObject({ ok: true, minor: 500 });
    expect(parseAmount("12 ARS", "USD", "unknown")).toMatchObject({
      ok: false,
      code: "AMOUNT_CURRENCY_MISMATCH",
    });
  });

  it("treats a mixed sheet like an unknown one: only ambiguous values fail", () => {
    expect(parseAmount("1,234", "USD", "mixed")).toMatchObject({ ok: false, code: "AMOUNT_AMBIGUOUS" });
    expect(parseAmount("1,234.50", "USD", "mixed")).toMatchObject({ ok: true, minor: 123450 });
  });
});

describe("formatMinor", () => {
  it("renders exact major units with the currency's decimals", () => {
    expect(formatMinor(125000, "USD")).toBe("1250.00");
    expect(formatMinor(5, "USD")).toBe("0.05");
    expect(formatMinor(5000, "JPY")).toBe("5000");
    expect(formatMinor(1234, "KWD")).toBe("1.234");
    expect(formatMinor(-150, "EUR")).toBe("-1.50");
    expect(formatMinor(9007199254740991n, "USD")).toBe("90071992547409.91");
  });

  it("refuses unknown currencies and unsafe numbers", () => {
    expect(() => formatMinor(1, "XYZ")).toThrow(RangeError);
    expect(() => formatMinor(1.5, "USD")).toThrow(RangeError);
  });
});

describe("amount convention", () => {
  it("reads evidence from single values", () => {
    expect(amountConventionEvidence("12,5")).toBe("comma");
    expect(amountConventionEvidence("1.234,56")).toBe("comma");
    expect(amountConventionEvidence("1.234.567")).toBe("comma");
    expect(amountConventionEvidence("1,234.56")).toBe("dot");
    expect(amountConventionEvidence("12.50")).toBe("dot");
    expect(amountConventionEvidence("1,234")).toBeNull();
    expect(amountConventionEvidence("1.234")).toBeNull();
    expect(amountConventionEvidence("1234")).toBeNull();
  });

  it("decides per sheet, and conflicting evidence makes the sheet mixed", () => {
    const tally = new AmountConventionTally();
    expect(tally.convention).toBe("unknown");
    tally.addAmountText("1,234");
    expect(tally.convention).toBe("unknown");
    tally.addAmountText("12,50");
    expect(tally.convention).toBe("comma");
    tally.addAmountText("1,234.56");
    expect(tally.convention).toBe("mixed");
  });
});

describe("convention evidence ignores a currency symbol's own dot", () => {
  it("reads no decimal mark from `Fr.` or `kr.` themselves", () => {
    expect(amountConventionEvidence("Fr. 1.500")).toBeNull();
    expect(amountConventionEvidence("1,500 Fr.")).toBeNull();
    expect(amountConventionEvidence("kr. 1.500")).toBeNull();
    expect(amountConventionEvidence("Fr. 12.50")).toBe("dot");
    expect(amountConventionEvidence("12,50 kr.")).toBe("comma");
    expect(amountConventionEvidence("CHF 1.500")).toBeNull();
  });

  it("so a CHF sheet whose only amount is `Fr. 1.500` finds it ambiguous, not 1500.00", () => {
    const tally = new AmountConventionTally();
    tally.addAmountText("Fr. 1.500");
    const parsed = parseAmount("Fr. 1.500", "CHF", tally.convention);
    expect(parsed).toMatchObject({ ok: false, code: "AMOUNT_AMBIGUOUS" });
  });
});
