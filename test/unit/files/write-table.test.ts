import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ExcelJS from "exceljs";
import JSZip from "jszip";
import Papa from "papaparse";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { formatFromPath, type TableRow, writeTable } from "../../../src/files/index.js";

const FORMULAS = ['=HYPERLINK("http://x","y")', "+1", "-2", "@SUM(A1)", "\tx", "\rx"];
const UNICODE = "Zoë Ødegård · 北京 · 😀";
const COLUMNS = ["reference", "note", "amount", "status"];

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "payouts-table-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function rows(): TableRow[] {
  return [
    ...FORMULAS.map((text, i): TableRow => [`R-${i}`, text, 10 + i, "completed"]),
    ["R-U", UNICODE, -2, "failed"],
    ["R-N", null, null],
  ];
}

/** Sheet XML of the first worksheet, as stored in the zip. */
async function sheetXml(path: string): Promise<string> {
  const zip = await JSZip.loadAsync(await readFile(path));
  const file = zip.file("xl/worksheets/sheet1.xml");
  if (!file) throw new Error("no sheet1.xml in the workbook");
  return file.async("string");
}

/** The `<c>` element of one cell, e.g. "B2". */
function cellXml(xml: string, address: string): string {
  const match = new RegExp(`<c r="${address}"[^>]*?(?:/>|>.*?</c>)`, "s").exec(xml);
  if (!match) throw new Error(`cell ${address} not found`);
  return match[0];
}

describe("formatFromPath", () => {
  it("reads the format from the extension, in any case", () => {
    expect(formatFromPath("/x/result.CSV")).toBe("csv");
    expect(formatFromPath("a.b/report.xlsx")).toBe("xlsx");
    expect(formatFromPath("r.json")).toBe("json");
  });
  it("refuses an extension it cannot write", () => {
    expect(() => formatFromPath("result.xls")).toThrow(/\.csv, \.xlsx or \.json/);
    expect(() => formatFromPath("result")).toThrow();
  });
});

describe("writeTable csv", () => {
  it("writes a BOM, CRLF records, RFC 4180 quoting, unquoted numbers and neutralised formulas", async () => {
    const path = join(dir, "result.csv");
    const summary = await writeTable(path, { columns: COLUMNS, rows: rows() });
    expect(summary).toEqual({ format: "csv", rows: 8 });
    const text = await readFile(path, "utf8");
    expect(text.startsWith("\uFEFFreference,note,amount,status\r\n")).toBe(true);
    expect(text).toContain(`R-0,"'=HYPERLINK(""http://x"",""y"")",10,completed\r\n`);
    expect(text).toContain("R-2,'-2,12,completed\r\n");
    expect(text).toContain(`R-U,${UNICODE},-2,failed\r\n`);
    expect(text.endsWith("R-N,,,\r\n")).toBe(true);

    const parsed = Papa.parse<string[]>(text.slice(1), { newline: "\r\n" });
    const notes = parsed.data.slice(1, 7).map((row) => row[1]);
    expect(notes).toEqual(FORMULAS.map((f) => `'${f}`));
    for (const note of notes) expect(note).not.toMatch(/^[=+\-@\t\r]/);
  });

  it("accepts rows from an async iterable", async () => {
    async function* source(): AsyncGenerator<TableRow> {
      yield ["a", "b", 1, "queued"];
      yield ["c", "d", 2.5, "queued"];
    }
    const path = join(dir, "streamed.csv");
    expect(await writeTable(path, { columns: COLUMNS, rows: source() })).toEqual({ format: "csv", rows: 2 });
    expect(await readFile(path, "utf8")).toBe(
      "\uFEFFreference,note,amount,status\r\na,b,1,queued\r\nc,d,2.5,queued\r\n",
    );
  });

  it("refuses a row with more cells than columns instead of dropping data", async () => {
    const path = join(dir, "wide.csv");
    await expect(writeTable(path, { columns: ["a"], rows: [["1", "2"]] })).rejects.toThrow(
      /row 1 has 2 cells/,
    );
    expect(await readdir(dir)).toEqual([]);
  });
});

describe("writeTable xlsx", () => {
  it("neutralises formula-looking text: string cells, no formula, both through exceljs and in the XML", async () => {
    const path = join(dir, "result.xlsx");
    await writeTable(path, { columns: COLUMNS, rows: rows(), sheetName: "Results", statusColumn: "status" });

    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(path);
    const sheet = workbook.getWorksheet("Results");
    if (!sheet) throw new Error("sheet missing");
    FORMULAS.forEach((formula, i) => {
      const cell = sheet.getCell(i + 2, 2);
      expect(cell.type).toBe(ExcelJS.ValueType.String);
      // A bare CR cannot survive XML (parsers read it as LF), so XLSX text has LF line ends.
      expect(cell.value).toBe(`'${formula.replace("\r", "\n")}`);
      expect(cell.formula).toBeUndefined();
    });

    const xml = await sheetXml(path);
    expect(xml).not.toContain("<f>");
    for (let row = 2; row <= 7; row++) {
      const cell = cellXml(xml, `B${row}`);
      expect(cell).toMatch(/t="(inlineStr|s|str)"/);
    }
  });

  it("writes real numbers as numeric cells and keeps unicode", async () => {
    const path = join(dir, "result.xlsx");
    await writeTable(path, { columns: COLUMNS, rows: rows() });
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(path);
    const sheet = workbook.worksheets[0];
    if (!sheet) throw new Error("sheet missing");
    expect(sheet.name).toBe("Sheet1");
    expect(sheet.getCell("C2").type).toBe(ExcelJS.ValueType.Number);
    expect(sheet.getCell("C8").value).toBe(-2);
    expect(sheet.getCell("B8").value).toBe(UNICODE);
    expect(sheet.getCell("B9").value).toBeNull();

    const numberCell = cellXml(await sheetXml(path), "C8");
    expect(numberCell).not.toMatch(/t="/);
    expect(numberCell).toContain("<v>-2</v>");
  });

  it("has a bold frozen header, an autofilter over the header and column widths", async () => {
    const path = join(dir, "result.xlsx");
    await writeTable(path, { columns: COLUMNS, rows: rows() });
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(path);
    const sheet = workbook.worksheets[0];
    if (!sheet) throw new Error("sheet missing");
    expect(sheet.getRow(1).values).toEqual([undefined, ...COLUMNS]);
    expect(sheet.getCell("A1").font?.bold).toBe(true);
    expect(sheet.views[0]).toMatchObject({ state: "frozen", ySplit: 1 });
    const xml = await sheetXml(path);
    expect(xml).toContain('<autoFilter ref="A1:D1"');
    expect(sheet.getColumn(2).width).toBeGreaterThanOrEqual(UNICODE.length);
  });

  it("colours the status cells when a status column is named", async () => {
    const path = join(dir, "result.xlsx");
    await writeTable(path, { columns: COLUMNS, rows: rows(), statusColumn: "status" });
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(path);
    const sheet = workbook.worksheets[0];
    if (!sheet) throw new Error("sheet missing");
    const fillOf = (address: string) => {
      const fill = sheet.getCell(address).fill;
      return fill?.type === "pattern" ? fill.fgColor?.argb : undefined;
    };
    expect(fillOf("D2")).toBe("FFC6EFCE");
    expect(fillOf("D8")).toBe("FFFFC7CE");
    expect(fillOf("C2")).toBeUndefined();
  });

  it("leaves the previous file intact and no temp file when the rows fail half-way", async () => {
    const path = join(dir, "result.xlsx");
    await writeFile(path, "previous result");
    async function* failing(): AsyncGenerator<TableRow> {
      yield ["R-1", "fine", 1, "completed"];
      throw new Error("redis went away");
    }
    await expect(writeTable(path, { columns: COLUMNS, rows: failing() })).rejects.toThrow("redis went away");
    expect(await readFile(path, "utf8")).toBe("previous result");
    expect(await readdir(dir)).toEqual(["result.xlsx"]);
  });

  it("refuses NaN rather than corrupting the sheet", async () => {
    const path = join(dir, "nan.xlsx");
    await expect(writeTable(path, { columns: ["amount"], rows: [[Number.NaN]] })).rejects.toThrow(
      /non-finite/,
    );
    expect(await readdir(dir)).toEqual([]);
  });
});

describe("writeTable json", () => {
  it("writes an array of objects with numbers as numbers and text exactly as given", async () => {
    const path = join(dir, "result.json");
    await writeTable(path, { columns: COLUMNS, rows: rows() });
    const parsed = JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>[];
    expect(parsed).toHaveLength(8);
    expect(parsed[0]).toEqual({ reference: "R-0", note: FORMULAS[0], amount: 10, status: "completed" });
    expect(parsed[6]).toEqual({ reference: "R-U", note: UNICODE, amount: -2, status: "failed" });
    expect(parsed[7]).toEqual({ reference: "R-N", note: null, amount: null, status: null });
  });

  it("writes an empty array for no rows and refuses duplicate column names", async () => {
    const path = join(dir, "empty.json");
    await writeTable(path, { columns: COLUMNS, rows: [] });
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual([]);
    await expect(writeTable(join(dir, "dup.json"), { columns: ["a", "a"], rows: [] })).rejects.toThrow(
      /twice/,
    );
    expect(await readdir(dir)).toEqual(["empty.json"]);
  });
});
