/**
 * What a raw XLSX cell means: shared-string lookup, number formats that make a number a date, the 1904
 * date system, formula results, error and boolean cells. And the number text the validator reads, which
 * must be exactly what Excel shows (15 significant digits).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { excelNumberText } from "../../../src/money/index.js";
import { displayNumberText } from "../../../src/sheets/cell-value.js";
import {
  type CellContext,
  dateStyleTable,
  interpretCell,
} from "../../../src/sheets/xlsx/cell-interpreter.js";
import { SharedStringsParser } from "../../../src/sheets/xlsx/shared-strings.js";
import type { RawCell } from "../../../src/sheets/xlsx/worksheet-scanner.js";

function table(texts: string[]) {
  const parser = new SharedStringsParser();
  parser.feed(`<sst>${texts.map((t) => `<si><t>${t}</t></si>`).join("")}</sst>`);
  return parser.end();
}

/** Styles as a workbook declares them: 0 General, 1 a built-in date (14), 2 a custom date, 3 money, 4 text. */
const NUM_FMTS: Record<number, string | undefined> = {
  1: "mm-dd-yy",
  2: "yyyy\\-mm\\-dd;@",
  3: '#,##0.00\\ "€";[Red]\\-#,##0.00\\ "€"',
  4: "@",
};

function context(date1904 = false): CellContext {
  return {
    sharedStrings: table(["acct_1", "", "Zahlung für Müller"]),
    date1904,
    isDateStyle: dateStyleTable((index) => NUM_FMTS[index]),
  };
}

const cell = (partial: Partial<RawCell>): RawCell => ({
  column: 0,
  type: "",
  style: 0,
  value: undefined,
  formula: false,
  ...partial,
});

describe("interpretCell", () => {
  it("looks up shared strings, and treats an empty or missing entry as an empty cell", () => {
    const ctx = context();
    expect(interpretCell(cell({ type: "s", value: "0" }), ctx)).toEqual({ kind: "string", text: "acct_1" });
    expect(interpretCell(cell({ type: "s", value: "2" }), ctx)).toEqual({
      kind: "string",
      text: "Zahlung für Müller",
    });
    expect(interpretCell(cell({ type: "s", value: "1" }), ctx)).toBeUndefined();
    expect(interpretCell(cell({ type: "s", value: "99" }), ctx)).toBeUndefined();
  });

  it("reads numbers at Excel's 15 digits, and refuses to trust integers longer than that", () => {
    const ctx = context();
    expect(interpretCell(cell({ value: "1250.5" }), ctx)).toEqual({
      kind: "number",
      text: "1250.5",
      number: 1250.5,
    });
    expect(interpretCell(cell({ value: "0.30000000000000004" }), ctx)).toMatchObject({ text: "0.3" });
    expect(interpretCell(cell({ value: "1.2345678901234568E+18" }), ctx)).toMatchObject({ lossy: true });
    // A money format is not a date format, even with letters and escapes in it.
    expect(interpretCell(cell({ value: "12.5", style: 3 }), ctx)).toMatchObject({
      kind: "number",
      text: "12.5",
    });
    expect(interpretCell(cell({ value: "" }), ctx)).toMatchObject({ kind: "error", error: "#NUM!" });
  });

  it("turns numbers in date-formatted cells into dates, in both date systems", () => {
    expect(interpretCell(cell({ value: "46082", style: 1 }), context())).toEqual({
      kind: "date",
      text: "2026-03-01",
    });
    expect(interpretCell(cell({ value: "46082.75", style: 2 }), context())).toEqual({
      kind: "date",
      text: "2026-03-01T18:00:00",
    });
    // The same day in a 1904 workbook (old Mac Excel) is 1462 days less.
    expect(interpretCell(cell({ value: "44620", style: 1 }), context(true))).toEqual({
      kind: "date",
      text: "2026-03-01",
    });
    // Style 0 (General) never makes a date, whatever the value.
    expect(interpretCell(cell({ value: "46082" }), context())).toMatchObject({ kind: "number" });
    expect(interpretCell(cell({ value: "nonsense", style: 1 }), context())).toMatchObject({ kind: "error" });
  });

  it('reads booleans, errors and ISO dates (t="d")', () => {
    const ctx = context();
    expect(interpretCell(cell({ type: "b", value: "1" }), ctx)).toEqual({ kind: "boolean", text: "TRUE" });
    expect(interpretCell(cell({ type: "b", value: "0" }), ctx)).toEqual({ kind: "boolean", text: "FALSE" });
    expect(interpretCell(cell({ type: "e", value: "#N/A" }), ctx)).toEqual({
      kind: "error",
      text: "#N/A",
      error: "#N/A",
    });
    expect(interpretCell(cell({ type: "d", value: "2026-03-01T00:00:00Z" }), ctx)).toEqual({
      kind: "date",
      text: "2026-03-01",
    });
    expect(interpretCell(cell({ type: "d", value: "2026-02-30" }), ctx)).toMatchObject({ kind: "error" });
  });

  it("reads inline strings and formula text results verbatim, spaces included", () => {
    const ctx = context();
    expect(interpretCell(cell({ type: "inlineStr", value: " 00123 " }), ctx)).toEqual({
      kind: "string",
      text: " 00123 ",
    });
    expect(interpretCell(cell({ type: "inlineStr", value: "" }), ctx)).toBeUndefined();
  });

  it("uses a formula's cached result, marks it, and says so when there is none", () => {
    const ctx = context();
    expect(interpretCell(cell({ type: "str", value: "r2", formula: true }), ctx)).toEqual({
      kind: "string",
      text: "r2",
      formula: true,
    });
    expect(interpretCell(cell({ value: "46083", style: 1, formula: true }), ctx)).toEqual({
      kind: "date",
      text: "2026-03-02",
      formula: true,
    });
    expect(interpretCell(cell({ type: "e", value: "#DIV/0!", formula: true }), ctx)).toEqual({
      kind: "error",
      text: "#DIV/0!",
      error: "#DIV/0!",
      formula: true,
    });
    expect(interpretCell(cell({ type: "b", value: "0", formula: true }), ctx)).toMatchObject({
      text: "FALSE",
    });
    expect(interpretCell(cell({ type: "str", value: "", formula: true }), ctx)).toEqual({
      kind: "empty",
      text: "",
      formula: true,
    });
    expect(interpretCell(cell({ formula: true }), ctx)).toEqual({
      kind: "error",
      text: "",
      error: "FORMULA_NOT_CALCULATED",
      formula: true,
    });
  });
});

describe("displayNumberText", () => {
  it("is exactly excelNumberText for every double", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        expect(displayNumberText(value)).toBe(excelNumberText(value));
      }),
      { numRuns: 4_000 },
    );
  });

  it("is exactly excelNumberText for money-like amounts and long integers", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1e12, max: 1e12 }),
        fc.integer({ min: 0, max: 6 }),
        (minor, decimals) => {
          const value = minor / 10 ** decimals;
          expect(displayNumberText(value)).toBe(excelNumberText(value));
        },
      ),
      { numRuns: 4_000 },
    );
    for (const value of [0.1 + 0.2, 1e15, 123456789012345680, 1e21, 1.5e-7, 0.000001, -0, 99.99, 2 ** 53]) {
      expect(displayNumberText(value)).toBe(excelNumberText(value));
    }
  });
});
