import { describe, expect, it } from "vitest";
import { numberCell, paddedIntegerFormat, paddedIntegerText } from "../../../src/sheets/cell-value.js";
import { firstUnfitWindows1252Byte } from "../../../src/sheets/csv/index.js";
import {
  canonicalColumn,
  columnLetter,
  dateText,
  detectDelimiter,
  excelSerialToDate,
  findHeader,
  isDateFormat,
  parseSepLine,
  SheetReadError,
  sheetFormatOf,
  sniffEncoding,
} from "../../../src/sheets/index.js";
import { parseCellFormats, parseRelationships, parseWorkbook } from "../../../src/sheets/xlsx/index.js";

describe("canonicalColumn", () => {
  it.each([
    ["reference", "reference"],
    ["Ref", "reference"],
    ["Payment Reference", "reference"],
    ["to_account", "to_account"],
    ["To Account", "to_account"],
    ["TO-ACCOUNT", "to_account"],
    ["Payee", "to_account"],
    ["payee account", "to_account"],
    ["From", "from_account"],
    ["Funding account", "from_account"],
    ["Amount *", "amount"],
    ["Payout amount", "amount"],
    ["SUM", "amount"],
    ["CCY", "currency"],
    ["Delivery preference", "delivery"],
    ["speed", "delivery"],
    ["Memo", "payer_memo"],
    ["Internal memo", "payer_memo"],
    ["Note", "recipient_note"],
    ["Description", "recipient_note"],
    ["purpose", "purpose"],
    ["Attachment", "attachment"],
    ["\uFEFFto_account", "to_account"],
    ["metadata.CostCenter", "metadata.CostCenter"],
    ["Metadata:Cost Center", "metadata.Cost Center"],
    ["meta.po_number", "metadata.po_number"],
  ])("%j is %j", (header, canonical) => {
    expect(canonicalColumn(header)).toBe(canonical);
  });

  it.each(["Invoice", "Name", "Total amount due", "", "metadata."])(
    "%j is not one of our columns",
    (header) => {
      expect(canonicalColumn(header)).toBeNull();
    },
  );
});

describe("findHeader", () => {
  it("skips title rows and finds the first row naming to_account and amount", () => {
    const found = findHeader([
      ["Payouts March"],
      [],
      ["Payee", "Sum", "Comment", ""],
      ["to_account", "amount"],
    ]);
    expect(found?.index).toBe(2);
    expect(found?.columns).toEqual([
      { index: 0, letter: "A", original: "Payee", canonical: "to_account", key: "to_account" },
      { index: 1, letter: "B", original: "Sum", canonical: "amount", key: "amount" },
      { index: 2, letter: "C", original: "Comment", canonical: null, key: "Comment" },
    ]);
  });

  it("gives unnamed and repeated extra columns unique keys", () => {
    const found = findHeader([["to_account", "", "amount", "x", "x"]]);
    expect(found?.columns.map((c) => c.key)).toEqual([
      "to_account",
      "column B",
      "amount",
      "x",
      "x (column E)",
    ]);
  });

  it("looks only at the first 20 rows", () => {
    const rows = [...Array.from({ length: 20 }, () => ["title"]), ["to_account", "amount"]];
    expect(findHeader(rows)).toBeUndefined();
  });

  it("refuses two columns with the same meaning, naming both", () => {
    expect(() => findHeader([["to_account", "amount", "metadata.x", "meta:x"]])).toThrow(
      expect.objectContaining({
        code: "DUPLICATE_COLUMN",
        message: expect.stringContaining('C ("metadata.x") and D'),
      }),
    );
    expect(() => findHeader([["to_account", "amount", "sum"]])).toThrow(SheetReadError);
  });
});

describe("delimiter detection", () => {
  it("reads Excel's sep= line", () => {
    expect(parseSepLine("sep=;")).toBe(";");
    expect(parseSepLine("\uFEFFsep=|")).toBe("|");
    expect(parseSepLine("sep=,extra")).toBeUndefined();
  });

  it("chooses the delimiter on the header line, not fooled by decimal commas in the data", () => {
    expect(detectDelimiter(["to_account;amount;currency", "a;1,5;EUR", "b;2,75;EUR"])).toEqual({
      delimiter: ";",
      lineIndex: 0,
    });
    expect(detectDelimiter(["Title,,", "to_account\tamount", "x\t1"])).toEqual({
      delimiter: "\t",
      lineIndex: 1,
    });
    expect(detectDelimiter(['"to_account"|"amount"'])).toEqual({ delimiter: "|", lineIndex: 0 });
    expect(detectDelimiter(["name,total", "a,1"])).toBeUndefined();
  });
});

describe("encoding sniffing", () => {
  it("recognises byte-order marks and refuses UTF-16 without one", () => {
    expect(sniffEncoding(new Uint8Array([0xef, 0xbb, 0xbf, 0x61]))).toEqual({
      encoding: "utf-8",
      bomLength: 3,
    });
    expect(sniffEncoding(new Uint8Array([0xff, 0xfe, 0x61, 0]))).toEqual({
      encoding: "utf-16le",
      bomLength: 2,
    });
    expect(sniffEncoding(new Uint8Array([0xfe, 0xff, 0, 0x61]))).toEqual({
      encoding: "utf-16be",
      bomLength: 2,
    });
    expect(sniffEncoding(new Uint8Array([0x61, 0x62]))).toEqual({ encoding: "utf-8", bomLength: 0 });
    expect(sniffEncoding(new Uint8Array([0x61, 0, 0x62, 0]))).toBeUndefined();
  });

  it("accepts only printable windows-1252 bytes as a windows-1252 file", () => {
    expect(firstUnfitWindows1252Byte(Buffer.from([0x41, 0xfc, 0x80, 0x09, 0x0d, 0x0a]))).toBe(-1);
    expect(firstUnfitWindows1252Byte(Buffer.from([0x41, 0x81]))).toBe(1);
    expect(firstUnfitWindows1252Byte(Buffer.from([0x00]))).toBe(0);
  });
});

describe("cell normalisation", () => {
  it("recognises date formats and ignores quoted text and colour sections", () => {
    expect(isDateFormat("yyyy-mm-dd")).toBe(true);
    expect(isDateFormat("mm-dd-yy")).toBe(true);
    expect(isDateFormat("[$-409]d-mmm-yy;@")).toBe(true);
    expect(isDateFormat("h:mm AM/PM")).toBe(true);
    expect(isDateFormat("General")).toBe(false);
    expect(isDateFormat("#,##0.00")).toBe(false);
    expect(isDateFormat('#,##0.00 "days"')).toBe(false);
    expect(isDateFormat("[Red]0.00")).toBe(false);
    expect(isDateFormat(undefined)).toBe(false);
  });

  it("converts Excel serials in both date systems", () => {
    expect(dateText(excelSerialToDate(46082))).toBe("2026-03-01");
    expect(dateText(excelSerialToDate(46082 - 1462, true))).toBe("2026-03-01");
    expect(dateText(excelSerialToDate(46082.5))).toBe("2026-03-01T12:00:00");
  });

  it("reads a number cell as its shortest text, marking integers past 2^53 as lossy", () => {
    expect(numberCell(0.1 + 0.2)).toEqual({
      text: "0.3",
      kind: "number",
      number: 0.30000000000000004,
    });
    expect(numberCell(Number("1234567890123456789"))).toMatchObject({ kind: "number", lossy: true });
  });
});

describe("sheetFormatOf", () => {
  it("decides by content first, then by extension", () => {
    expect(sheetFormatOf("payouts.csv", new Uint8Array([0x50, 0x4b, 3, 4]))).toBe("xlsx");
    expect(sheetFormatOf("payouts.xlsx", new Uint8Array([0x50, 0x4b, 3, 4]))).toBe("xlsx");
    expect(sheetFormatOf("payouts.csv", new Uint8Array([0x61, 0x62]))).toBe("csv");
    expect(sheetFormatOf("payouts.TXT", new Uint8Array([0x61]))).toBe("csv");
    expect(() => sheetFormatOf("payouts.xlsx", new Uint8Array([0x61]))).toThrow(
      expect.objectContaining({ code: "FILE_CORRUPT" }),
    );
    expect(() => sheetFormatOf("payouts.xls", new Uint8Array([0xd0, 0xcf, 0x11, 0xe0]))).toThrow(
      expect.objectContaining({ code: "UNSUPPORTED_FORMAT" }),
    );
  });

  it("names columns like the spreadsheet does", () => {
    expect([0, 25, 26, 51, 52, 701, 702].map(columnLetter)).toEqual([
      "A",
      "Z",
      "AA",
      "AZ",
      "BA",
      "ZZ",
      "AAA",
    ]);
  });
});

describe("paddedIntegerFormat", () => {
  it("reads formats that pad a whole number with zeros, with text around it", () => {
    expect(paddedIntegerFormat("000000")).toEqual({ prefix: "", digits: 6, suffix: "" });
    expect(paddedIntegerFormat('"INV-"0000')).toEqual({ prefix: "INV-", digits: 4, suffix: "" });
    expect(paddedIntegerFormat('\\#00"/A"')).toEqual({ prefix: "#", digits: 2, suffix: "/A" });
    expect(paddedIntegerText(123, { prefix: "", digits: 6, suffix: "" })).toBe("000123");
    expect(paddedIntegerText(1234567, { prefix: "", digits: 6, suffix: "" })).toBe("1234567");
  });

  it("leaves every other format (and fractions, negatives) to the plain number", () => {
    for (const format of [
      "General",
      "0",
      "#",
      "0.00",
      "#,##0",
      "000-000",
      "0%",
      "[Red]0000",
      "@",
      "00;(00)",
    ]) {
      expect(paddedIntegerFormat(format), format).toBeUndefined();
    }
    expect(paddedIntegerText(12.5, { prefix: "", digits: 6, suffix: "" })).toBeUndefined();
    expect(paddedIntegerText(-3, { prefix: "", digits: 6, suffix: "" })).toBeUndefined();
  });
});

describe("the workbook's small parts", () => {
  it("reads sheets whatever the relationship prefix, their state and the date system", () => {
    const info = parseWorkbook(
      '<x:workbook xmlns:x="m" xmlns:rel="r"><x:workbookPr date1904="true"/><!-- <x:sheet name="no"/> -->' +
        '<x:sheets><x:sheet name="A &amp; B" sheetId="1" rel:id="rId3"/><x:sheet name="H" state="hidden" rel:id="rId4"/></x:sheets></x:workbook>',
    );
    expect(info).toEqual({
      date1904: true,
      sheets: [
        { name: "A & B", relationshipId: "rId3", hidden: false },
        { name: "H", relationshipId: "rId4", hidden: true },
      ],
    });
  });

  it("maps relationships, leaving external targets out", () => {
    const rels = parseRelationships(
      '<Relationships><Relationship Id="rId3" Type="t/worksheet" Target="worksheets/sheet1.xml"/>' +
        '<Relationship Id="rId9" Type="t/hyperlink" Target="http://x" TargetMode="External"/></Relationships>',
    );
    expect([...rels]).toEqual([["rId3", { type: "t/worksheet", target: "worksheets/sheet1.xml" }]]);
  });

  it("gives each cell format its number format, counting only cellXfs", () => {
    const formatOf = parseCellFormats(
      '<styleSheet><numFmts><numFmt numFmtId="164" formatCode="000000"/></numFmts>' +
        '<cellStyleXfs><xf numFmtId="14"/></cellStyleXfs>' +
        '<cellXfs count="3"><xf numFmtId="0"/><xf numFmtId="164"/><xf numFmtId="14" applyNumberFormat="1"/></cellXfs></styleSheet>',
    );
    expect([0, 1, 2, 3].map(formatOf)).toEqual(["General", "000000", "mm-dd-yy", undefined]);
  });
});
