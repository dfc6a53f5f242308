import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { csvField, csvRecord, excelSafeText, undoExcelSafeText } from "../../../src/files/index.js";

describe("excelSafeText", () => {
  it.each([
    ['=HYPERLINK("http://x","y")', `'=HYPERLINK("http://x","y")`],
    ["+1", "'+1"],
    ["-2", "'-2"],
    ["@SUM(A1)", "'@SUM(A1)"],
    ["\tx", "'\tx"],
    ["\rx", "'\rx"],
  ])("prefixes formula-looking text %j with a single quote", (input, expected) => {
    expect(excelSafeText(input)).toBe(expected);
  });

  it("leaves ordinary text alone, including formula characters later in the text", () => {
    for (const text of ["Invoice 1234", "a=b", "x+y", "Zoë Ødegård 北京", "", "'quoted'", "1-2"]) {
      expect(excelSafeText(text)).toBe(text);
    }
  });

  it("is undone exactly, even for text that already starts with quotes", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        expect(undoExcelSafeText(excelSafeText(text))).toBe(text);
      }),
    );
    expect(excelSafeText("'=x")).toBe("''=x");
    expect(undoExcelSafeText("''=x")).toBe("'=x");
  });

  it("never produces text that starts a formula", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        expect(excelSafeText(text)).not.toMatch(/^[=+\-@\t\r]/);
      }),
    );
  });
});

describe("csv encoding", () => {
  it("quotes per RFC 4180 only when needed and doubles inner quotes", () => {
    expect(csvField("plain")).toBe("plain");
    expect(csvField("a,b")).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField("two\nlines")).toBe('"two\nlines"');
  });

  it("writes numbers unquoted and unescaped, and neutralises the same text", () => {
    expect(csvField(-2)).toBe("-2");
    expect(csvField("-2")).toBe("'-2");
    expect(csvField(1250.5)).toBe("1250.5");
    expect(csvField(null)).toBe("");
  });

  it("escapes before quoting, so a carriage-return formula is both prefixed and quoted", () => {
    expect(csvField("\r=1+1")).toBe('"\'\r=1+1"');
  });

  it("refuses numbers that have no cell representation", () => {
    expect(() => csvField(Number.NaN)).toThrow(/non-finite/);
    expect(() => csvField(Number.POSITIVE_INFINITY)).toThrow(/non-finite/);
  });

  it("ends each record with CRLF", () => {
    expect(csvRecord(["a", 1, null, "=x"])).toBe("a,1,,'=x\r\n");
  });
});
