import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ExcelJS from "exceljs";
import JSZip from "jszip";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSheet, SheetReadError, type SheetRow } from "../../../src/sheets/index.js";
import { type RawWorkbook, sharedStringRow, writeRawXlsx, xml } from "./ooxml.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "payouts-xlsx-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function readAll(path: string, sheet?: string) {
  const opened = await openSheet(path, sheet === undefined ? {} : { sheet });
  const rows: SheetRow[] = [];
  for await (const row of opened.rows) rows.push(row);
  return { header: opened.header, rows };
}

async function readError(path: string, sheet?: string): Promise<SheetReadError> {
  try {
    await readAll(path, sheet);
  } catch (error) {
    if (error instanceof SheetReadError) return error;
    throw error;
  }
  throw new Error("expected a SheetReadError");
}

/** The payout sheet the way Excel writes it: shared strings, styles, formulas with cached results. */
function excelLikeWorkbook(options: Partial<RawWorkbook> & { serialOffset?: number } = {}): RawWorkbook {
  const strings: string[] = [];
  const s = (text: string) => {
    strings.push(`<t>${xml(text)}</t>`);
    return strings.length - 1;
  };
  const offset = options.serialOffset ?? 0;
  const notes = sharedStringRow(1, ["Read me first"], strings);
  const title = sharedStringRow(1, ["Payouts March 2026"], strings);
  const header = sharedStringRow(
    3,
    [
      "Reference",
      "To Account",
      "Amount",
      "Currency",
      "Paid on",
      "Memo",
      "metadata.CostCenter",
      "Extra Stuff",
    ],
    strings,
  );
  strings.push("<r><t>Hello </t></r><r><rPr><b/></rPr><t>world</t></r>");
  const richText = strings.length - 1;
  const rows = [
    title,
    header,
    `<row r="4"><c r="A4" t="s"><v>${s("r1")}</v></c><c r="B4" s="2" t="s"><v>${s("00123")}</v></c>` +
      `<c r="C4"><v>1250.5</v></c><c r="D4" t="s"><v>${s("USD")}</v></c><c r="E4" s="1"><v>${46082 - offset}</v></c>` +
      `<c r="F4" t="s"><v>${richText}</v></c><c r="G4" t="s"><v>${s("CC-1")}</v></c><c r="H4" t="s"><v>${s("kept")}</v></c></row>`,
    `<row r="5"><c r="A5" t="str"><f>CONCAT("r","2")</f><v>r2</v></c><c r="B5"><v>1.2345678901234568E+18</v></c>` +
      `<c r="C5"><f>0.1+0.2</f><v>0.30000000000000004</v></c><c r="D5" t="inlineStr"><is><t>EUR</t></is></c>` +
      `<c r="E5" s="1"><f>DATE(2026,3,2)</f><v>${46083 - offset}</v></c><c r="F5" t="b"><v>1</v></c></row>`,
    '<row r="6"/>',
    `<row r="7"><c r="B7" t="s"><v>${s("acct_7")}</v></c><c r="C7" t="e"><v>#REF!</v></c>` +
      '<c r="D7"><f>SUM(Z1:Z2)</f></c><c r="E7" t="e"><f>1/0</f><v>#DIV/0!</v></c></row>',
    `<row r="8"><c r="A8" t="s"><v>${s("r8")}</v></c><c r="B8" t="s"><v>${s("acct_8")}</v></c><c r="C8"><v>10</v></c></row>`,
    `<row r="9"><c r="A9" t="s"><v>${s("r9")}</v></c><c r="B9"/><c r="C9"><v>20</v></c><c r="J9" t="s"><v>${s("stray")}</v></c></row>`,
  ];
  return {
    sheets: [
      { name: "Notes", rows: notes },
      {
        name: "Payouts",
        rows: rows.join(""),
        after: '<mergeCells count="2"><mergeCell ref="A1:E1"/><mergeCell ref="B8:B9"/></mergeCells>',
      },
    ],
    sharedStrings: strings,
    numFmts: '<numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd"/>',
    cellXfs:
      '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>' +
      '<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>' +
      '<xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>',
    ...options,
  };
}

describe("openSheet on XLSX written like Excel", () => {
  it.each([
    ["Excel part order", {}],
    ["LibreOffice part order (styles and workbook after the sheets)", { order: "libreoffice" as const }],
    ["the 1904 date system", { date1904: true, serialOffset: 1462 }],
  ])("reads every cell kind correctly with %s", async (_label, options) => {
    const path = join(dir, `excel-${Math.random().toString(36).slice(2)}.xlsx`);
    await writeRawXlsx(path, excelLikeWorkbook(options));
    const { header, rows } = await readAll(path);

    expect(header).toMatchObject({ sheetName: "Payouts", format: "xlsx", headerRowNumber: 3 });
    expect(header.columns.map((c) => [c.letter, c.canonical, c.key])).toEqual([
      ["A", "reference", "reference"],
      ["B", "to_account", "to_account"],
      ["C", "amount", "amount"],
      ["D", "currency", "currency"],
      ["E", null, "Paid on"],
      ["F", "payer_memo", "payer_memo"],
      ["G", "metadata.CostCenter", "metadata.CostCenter"],
      ["H", null, "Extra Stuff"],
    ]);
    expect(rows.map((r) => r.rowNumber)).toEqual([4, 5, 7, 8, 9]);
    const [r4, r5, r7, r8, r9] = rows as [SheetRow, SheetRow, SheetRow, SheetRow, SheetRow];

    expect(r4.cells).toMatchObject({
      reference: { kind: "string", text: "r1" },
      to_account: { kind: "string", text: "00123" }, // text-formatted cell keeps its leading zeros
      amount: { kind: "number", text: "1250.5", number: 1250.5 },
      currency: { kind: "string", text: "USD" },
      "Paid on": { kind: "date", text: "2026-03-01" },
      payer_memo: { kind: "string", text: "Hello world" },
      "metadata.CostCenter": { kind: "string", text: "CC-1" },
      "Extra Stuff": { kind: "string", text: "kept" },
    });
    expect(r5.cells).toMatchObject({
      reference: { kind: "string", text: "r2", formula: true },
      to_account: { kind: "number", lossy: true },
      amount: { kind: "number", text: "0.3", formula: true },
      currency: { kind: "string", text: "EUR" },
      "Paid on": { kind: "date", text: "2026-03-02", formula: true },
      payer_memo: { kind: "boolean", text: "TRUE" },
      "metadata.CostCenter": { kind: "empty", text: "" },
    });
    expect(r7.cells).toMatchObject({
      reference: { kind: "empty" },
      amount: { kind: "error", text: "#REF!", error: "#REF!" },
      currency: { kind: "error", error: "FORMULA_NOT_CALCULATED", formula: true },
      "Paid on": { kind: "error", formula: true },
    });
    expect(r8.cells.to_account).toEqual({ kind: "string", text: "acct_8" });
    // The covered cell of a merge is marked, never filled: filling could pay one payee twice.
    expect(r9.cells.to_account).toEqual({ kind: "empty", text: "", mergedInto: "B8:B9" });
    expect(r9.unheaded).toEqual({ J: { kind: "string", text: "stray" } });
  });

  it("reads the sheet named by the caller, and lists the sheets when the name is wrong", async () => {
    const path = join(dir, "two-sheets.xlsx");
    const strings: string[] = [];
    const first =
      sharedStringRow(1, ["to_account", "amount"], strings) + sharedStringRow(2, ["acct_a", "1"], strings);
    const second =
      sharedStringRow(1, ["Payee", "Sum"], strings) + sharedStringRow(2, ["acct_b", "2"], strings);
    await writeRawXlsx(path, {
      sheets: [
        { name: "March", rows: first },
        { name: "April", rows: second },
      ],
      sharedStrings: strings,
    });
    expect((await readAll(path)).rows[0]?.cells.to_account?.text).toBe("acct_a");
    expect((await readAll(path, "april")).rows[0]?.cells.to_account?.text).toBe("acct_b");
    const error = await readError(path, "May");
    expect(error.code).toBe("SHEET_NOT_FOUND");
    expect(error.message).toContain("two-sheets.xlsx");
    expect(error.message).toContain('"March", "April"');
  });

  it("skips hidden sheets and sheets without our header when choosing", async () => {
    const path = join(dir, "hidden.xlsx");
    const strings: string[] = [];
    const hidden =
      sharedStringRow(1, ["to_account", "amount"], strings) + sharedStringRow(2, ["hidden", "1"], strings);
    const visible =
      sharedStringRow(2, ["to_account", "amount"], strings) + sharedStringRow(3, ["shown", "1"], strings);
    await writeRawXlsx(path, {
      sheets: [
        { name: "Lookup", rows: hidden, state: "hidden" },
        { name: "Data", rows: visible },
      ],
      sharedStrings: strings,
    });
    const { header, rows } = await readAll(path);
    expect(header.sheetName).toBe("Data");
    expect(rows.map((r) => [r.rowNumber, r.cells.to_account?.text])).toEqual([[3, "shown"]]);
  });

  it("refuses a workbook without our header, naming the file and the sheets", async () => {
    const path = join(dir, "no-header.xlsx");
    const strings: string[] = [];
    await writeRawXlsx(path, {
      sheets: [{ name: "Sheet1", rows: sharedStringRow(1, ["name", "total"], strings) }],
      sharedStrings: strings,
    });
    const error = await readError(path);
    expect(error.code).toBe("HEADER_NOT_FOUND");
    expect(error.message).toMatch(/^no-header\.xlsx: .*"Sheet1"/);
  });

  it("refuses two columns that mean the same thing, naming both", async () => {
    const path = join(dir, "duplicate.xlsx");
    const strings: string[] = [];
    await writeRawXlsx(path, {
      sheets: [{ name: "S", rows: sharedStringRow(1, ["to_account", "amount", "Sum"], strings) }],
      sharedStrings: strings,
    });
    const error = await readError(path);
    expect(error.code).toBe("DUPLICATE_COLUMN");
    expect(error.message).toContain('B ("amount") and C ("Sum")');
  });

  it("keeps the text of shared strings with phonetic guides (Japanese Excel)", async () => {
    const path = join(dir, "phonetic.xlsx");
    const strings = [
      "<t>to_account</t>",
      "<t>amount</t>",
      '<t>山田太郎</t><rPh sb="0" eb="2"><t>ヤマダ</t></rPh>',
    ];
    await writeRawXlsx(path, {
      sheets: [
        {
          name: "S",
          rows: '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row><row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2"><v>5000</v></c></row>',
        },
      ],
      sharedStrings: strings,
    });
    expect((await readAll(path)).rows[0]?.cells.to_account?.text).toBe("山田太郎");
  });

  it("never corrupts multi-byte characters that straddle decompression chunks", async () => {
    const path = join(dir, "many-euros.xlsx");
    const strings: string[] = ["<t>reference</t>", "<t>to_account</t>", "<t>amount</t>"];
    let rows =
      '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c></row>';
    const expected: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const text = `Zahlung €${i} für Müller–${"é".repeat(i % 7)}`;
      expected.push(text);
      strings.push(`<t>${text}</t>`);
      rows += `<row r="${i + 2}"><c r="A${i + 2}" t="s"><v>${strings.length - 1}</v></c><c r="B${i + 2}" t="inlineStr"><is><t>${text}</t></is></c><c r="C${i + 2}"><v>1</v></c></row>`;
    }
    await writeRawXlsx(path, { sheets: [{ name: "S", rows }], sharedStrings: strings });
    const read = (await readAll(path)).rows;
    expect(read.map((r) => r.cells.reference?.text)).toEqual(expected);
    expect(read.map((r) => r.cells.to_account?.text)).toEqual(expected);
  });

  it("reads inline strings with several runs whole, without their phonetic guides", async () => {
    // exceljs kept only the last run (reading "123" for "acct_123"); such files were refused before.
    const path = join(dir, "inline-rich.xlsx");
    const strings: string[] = [];
    const rows =
      sharedStringRow(1, ["to_account", "amount", "payer_memo"], strings) +
      '<row r="2"><c r="A2" t="inlineStr"><is><r><t>acct_</t></r><r><rPr><b/></rPr><t>123</t></r></is></c>' +
      '<c r="B2"><v>1</v></c><c r="C2" t="inlineStr"><is><t>山田</t><rPh sb="0" eb="2"><t>ヤマダ</t></rPh></is></c></row>';
    await writeRawXlsx(path, { sheets: [{ name: "S", rows }], sharedStrings: strings });
    const [row] = (await readAll(path)).rows;
    expect(row?.cells.to_account).toEqual({ kind: "string", text: "acct_123" });
    expect(row?.cells.payer_memo).toEqual({ kind: "string", text: "山田" });
  });

  it("decides the amount convention from text amounts over the whole sheet", async () => {
    const path = join(dir, "comma.xlsx");
    const strings: string[] = [];
    const rows = [
      sharedStringRow(1, ["to_account", "amount"], strings),
      sharedStringRow(2, ["a", "1.234"], strings),
      sharedStringRow(3, ["b", "12,50"], strings),
    ].join("");
    await writeRawXlsx(path, { sheets: [{ name: "S", rows }], sharedStrings: strings });
    expect((await readAll(path)).header.amountConvention).toBe("comma");
  });
});

describe("openSheet on XLSX details other writers produce", () => {
  it('reads the 1904 date system when the workbook says date1904="true" (LibreOffice)', async () => {
    const path = join(dir, "libreoffice-1904.xlsx");
    const strings: string[] = [];
    const rows =
      sharedStringRow(1, ["to_account", "amount", "due"], strings) +
      `<row r="2"><c r="A2" t="s"><v>${strings.push("<t>acct_1</t>") - 1}</v></c><c r="B2"><v>5</v></c>` +
      '<c r="C2" s="1"><v>44620</v></c></row>';
    await writeRawXlsx(path, {
      sheets: [{ name: "S", rows }],
      sharedStrings: strings,
      cellXfs:
        '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>' +
        '<xf numFmtId="14" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>',
    });
    const zip = await JSZip.loadAsync(await readFile(path));
    const workbookXml = (await zip.file("xl/workbook.xml")?.async("string")) ?? "";
    zip.file("xl/workbook.xml", workbookXml.replace("<workbookPr/>", '<workbookPr date1904="true"/>'));
    await writeFile(path, await zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" }));
    expect((await readAll(path)).rows[0]?.cells.due).toEqual({ kind: "date", text: "2026-03-01" });
  });

  it("decodes entities, keeps spaces, reads CDATA and shows a formula's own error", async () => {
    const path = join(dir, "entities.xlsx");
    const strings = ["<t>to_account</t>", "<t>amount</t>", "<t>payer_memo</t>", "<t>purpose</t>"];
    const rows =
      '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c><c r="D1" t="s"><v>3</v></c></row>' +
      '<row r="2"><c r="A2" t="inlineStr"><is><t><![CDATA[acct_<1>]]></t></is></c><c r="B2"><v>10</v></c>' +
      '<c r="C2" t="inlineStr"><is><t xml:space="preserve">  Smith &amp; Sons &#8364;5  </t></is></c>' +
      '<c r="D2" t="e"><f>1/0</f><v>#DIV/0!</v></c></row>';
    await writeRawXlsx(path, { sheets: [{ name: "S", rows }], sharedStrings: strings });
    const [row] = (await readAll(path)).rows;
    expect(row?.cells).toEqual({
      to_account: { kind: "string", text: "acct_<1>" },
      amount: { kind: "number", text: "10", number: 10 },
      payer_memo: { kind: "string", text: "  Smith & Sons €5  " },
      purpose: { kind: "error", text: "#DIV/0!", error: "#DIV/0!", formula: true },
    });
  });

  it("marks every covered cell of many merges, whatever order they are listed in", async () => {
    const path = join(dir, "merges.xlsx");
    const strings: string[] = [];
    let rows = sharedStringRow(1, ["reference", "to_account", "amount"], strings);
    for (let r = 2; r <= 40; r++) {
      rows += `<row r="${r}"><c r="A${r}" t="inlineStr"><is><t>r${r}</t></is></c><c r="C${r}"><v>${r}</v></c></row>`;
    }
    const merges = ["B30:C31", "A10:A12", "B2:B40", "C5:C6"];
    await writeRawXlsx(path, {
      sheets: [
        {
          name: "S",
          rows,
          after: `<mergeCells count="4">${merges.map((m) => `<mergeCell ref="${m}"/>`).join("")}</mergeCells>`,
        },
      ],
      sharedStrings: strings,
    });
    const read = new Map((await readAll(path)).rows.map((row) => [row.rowNumber, row.cells]));
    expect(read.get(2)?.to_account).toEqual({ kind: "empty", text: "" }); // the top-left cell itself
    expect(read.get(3)?.to_account).toEqual({ kind: "empty", text: "", mergedInto: "B2:B40" });
    expect(read.get(5)?.amount).toEqual({ kind: "number", text: "5", number: 5 });
    expect(read.get(6)?.amount).toEqual({ kind: "empty", text: "", mergedInto: "C5:C6" });
    expect(read.get(7)?.amount).toEqual({ kind: "number", text: "7", number: 7 });
    expect(read.get(11)?.reference).toEqual({ kind: "empty", text: "", mergedInto: "A10:A12" });
    expect(read.get(13)?.reference).toEqual({ kind: "string", text: "r13" });
    expect(read.get(30)?.amount).toEqual({ kind: "empty", text: "", mergedInto: "B30:C31" });
    expect(read.get(31)?.amount).toEqual({ kind: "empty", text: "", mergedInto: "B30:C31" });
    expect(read.get(32)?.amount).toEqual({ kind: "number", text: "32", number: 32 });
  });

  it("decides the convention from text amounts however they are stored: shared, inline or formula", async () => {
    const path = join(dir, "comma-kinds.xlsx");
    const strings: string[] = [];
    const rows = [
      sharedStringRow(1, ["reference", "to_account", "amount", "currency"], strings),
      // Numbers in the amount column never decide; only text does.
      '<row r="2"><c r="C2"><v>1.234</v></c></row>',
      '<row r="3"><c r="A3" t="inlineStr"><is><t>x</t></is></c><c r="C3" t="inlineStr"><is><t>1.234,50</t></is></c></row>',
      '<row r="4"><c r="B4" t="s"><v>0</v></c><c r="C4" t="str"><f>"12,5"</f><v>12,5</v></c><c r="D4"><v>1</v></c></row>',
    ].join("");
    await writeRawXlsx(path, { sheets: [{ name: "S", rows }], sharedStrings: strings });
    const { header, rows: read } = await readAll(path);
    expect(header.amountConvention).toBe("comma");
    expect(read.map((r) => r.cells.amount?.text)).toEqual(["1.234", "1.234,50", "12,5"]);
  });

  it("reports a worksheet cut short inside the zip as FILE_CORRUPT", async () => {
    const path = join(dir, "cut-sheet.xlsx");
    const strings: string[] = [];
    await writeRawXlsx(path, {
      sheets: [{ name: "S", rows: sharedStringRow(1, ["to_account", "amount"], strings) }],
      sharedStrings: strings,
    });
    const zip = await JSZip.loadAsync(await readFile(path));
    zip.file(
      "xl/worksheets/sheet1.xml",
      `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` +
        '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row><row r="2"><c r="A2"><v>1</v>',
    );
    await writeFile(path, await zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" }));
    expect((await readError(path)).code).toBe("FILE_CORRUPT");
  });
});

describe("openSheet on XLSX written by exceljs", () => {
  it("reads dates, numbers, text with leading zeros and formulas", async () => {
    const path = join(dir, "exceljs.xlsx");
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet("Payouts");
    sheet.addRow(["reference", "from_account", "to_account", "amount", "currency", "delivery", "due"]);
    sheet.addRow(["r-1", "acct_from", "0042", 99.99, "USD", "standard-ach", new Date(Date.UTC(2026, 0, 31))]);
    sheet.addRow(["r-2", "acct_from", "acct_x", { formula: "B1", result: 12 }, "JPY", "", null]);
    await workbook.xlsx.writeFile(path);
    const { rows } = await readAll(path);
    expect(rows[0]?.cells).toMatchObject({
      to_account: { kind: "string", text: "0042" },
      amount: { kind: "number", text: "99.99" },
      due: { kind: "date", text: "2026-01-31" },
    });
    expect(rows[1]?.cells.amount).toEqual({ kind: "number", text: "12", number: 12, formula: true });
    expect(rows[1]?.cells.delivery).toEqual({ kind: "empty", text: "" });
  });
});

describe("openSheet on number cells with a zero-padded format", () => {
  it("reads ids and references as the sheet shows them (000123), amounts as numbers", async () => {
    const path = join(dir, "padded.xlsx");
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet("Payouts");
    sheet.addRow(["reference", "from_account", "to_account", "amount", "metadata.invoice"]);
    sheet.addRow([123, "acct_from", 42, 1250, 7]);
    sheet.addRow([4560, "acct_from", "acct_x", 5, 0]);
    sheet.getColumn(1).numFmt = "000000";
    sheet.getColumn(3).numFmt = '"ACC-"0000';
    sheet.getColumn(4).numFmt = "000000"; // an amount so formatted still pays its number
    sheet.getColumn(5).numFmt = "#,##0.00"; // not a padding format: the plain number, as before
    await workbook.xlsx.writeFile(path);
    const { rows } = await readAll(path);
    expect(rows[0]?.cells).toMatchObject({
      reference: { kind: "number", text: "000123", number: 123, padded: true },
      to_account: { kind: "number", text: "ACC-0042", number: 42, padded: true },
      amount: { kind: "number", text: "001250", number: 1250, padded: true },
      "metadata.invoice": { kind: "number", text: "7", number: 7 },
    });
    expect(rows[0]?.cells["metadata.invoice"]?.padded).toBeUndefined();
    expect(rows[1]?.cells.reference).toMatchObject({ text: "004560" });
  });
});

describe("openSheet on files that are not readable workbooks", () => {
  it("reports a damaged zip as FILE_CORRUPT", async () => {
    const path = join(dir, "truncated.xlsx");
    const good = join(dir, "good.xlsx");
    const strings: string[] = [];
    await writeRawXlsx(good, {
      sheets: [{ name: "S", rows: sharedStringRow(1, ["to_account", "amount"], strings) }],
      sharedStrings: strings,
    });
    const bytes = await readFile(good);
    await writeFile(path, bytes.subarray(0, Math.floor(bytes.length / 2)));
    expect((await readError(path)).code).toBe("FILE_CORRUPT");
  });

  it("refuses OpenDocument and legacy .xls files with advice", async () => {
    const ods = join(dir, "sheet.ods");
    const zip = new JSZip();
    zip.file("mimetype", "application/vnd.oasis.opendocument.spreadsheet");
    zip.file("content.xml", "<office:document-content/>");
    await writeFile(ods, await zip.generateAsync({ type: "nodebuffer" }));
    const odsError = await readError(ods);
    expect(odsError.code).toBe("UNSUPPORTED_FORMAT");
    expect(odsError.message).toContain(".xlsx");
    const xls = join(dir, "legacy.xls");
    await writeFile(xls, Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]));
    expect((await readError(xls)).code).toBe("UNSUPPORTED_FORMAT");
  });
});
