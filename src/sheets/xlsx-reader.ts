/**
 * Streaming XLSX reader on exceljs's streaming worksheet reader.
 *
 * We drive exceljs's `WorkbookReader` parts ourselves (with `sharedStrings: "cache"`, `styles: "cache"`,
 * `worksheets: "emit"`) instead of calling `WorkbookReader.read()`, because exceljs 4.4.0, unmaintained,
 * has four ways to misread a sheet that this module closes:
 * 1. It reads zip entries in file order. LibreOffice and others write `styles.xml` or `workbook.xml`
 *    after the worksheets, and then dates arrive as serial numbers and sheet names are lost. We open the
 *    zip's central directory (random access, unzipper `Open.file`) and read workbook, relationships,
 *    styles and shared strings first, whatever their order.
 * 2. Its SAX helper decodes every chunk of XML on its own, so a UTF-8 character split between two
 *    chunks becomes U+FFFD. We decode each entry with one streaming TextDecoder and give exceljs strings.
 * 3. Its shared-strings parser keeps only the last `<t>` of a string, so Japanese phonetic guides
 *    (`<rPh>`) replace the text. We parse shared strings ourselves: the runs joined, phonetics dropped.
 *    Its worksheet parser has the same flaw for inline strings (`t="inlineStr"`) with several runs; such
 *    a workbook is refused (FILE_CORRUPT asking to re-save it) rather than misread.
 * 4. It ignores `<mergeCell>` in streaming mode (exceljs issue #3000), and merges are written after all
 *    rows. We collect them while scanning the sheet once before handing out rows, and mark the covered
 *    cells (`mergedInto`); they are not filled from the top-left cell (see `SheetCell.mergedInto`).
 *
 * Memory: the shared-strings table is held (as exceljs does); rows are streamed. Each sheet is read
 * twice: once to collect amount-convention evidence and merges, once to hand out rows.
 */
import { createRequire } from "node:module";
import { posix } from "node:path";
import { Readable } from "node:stream";
import ExcelJS from "exceljs";
import { AmountConventionTally } from "../money/index.js";
import { normaliseCellValue } from "./cell-value.js";
import { describeHeaderSearch, findHeader, HEADER_SEARCH_ROWS } from "./header.js";
import {
  columnLetter,
  EMPTY_CELL,
  type OpenedSheet,
  type OpenSheetOptions,
  type SheetCell,
  type SheetColumn,
  type SheetHeader,
  SheetReadError,
  type SheetRow,
} from "./types.js";

// exceljs internals and its zip library have no type declarations; these are the parts we use.
interface ZipEntry {
  path: string;
  type: string;
  stream(): Readable;
}
interface ZipDirectory {
  files: ZipEntry[];
}
interface ExcelCell {
  value: unknown;
  numFmt?: string;
}
interface ExcelRow {
  number: number;
  eachCell(options: { includeEmpty: boolean }, callback: (cell: ExcelCell, column: number) => void): void;
}
interface WorkbookParts {
  _parseRels(stream: Readable): Promise<void>;
  _parseWorkbook(stream: Readable): Promise<void>;
  _parseStyles(stream: Readable): Promise<void>;
  workbookRels?: Array<{ Id: string; Target: string; Type: string }>;
  model?: { sheets?: Array<{ name: string; rId: string; state?: string }> };
  properties?: { model?: { date1904?: boolean } };
  sharedStrings?: string[];
}
type SaxEvent =
  | { eventType: "opentag"; value: { name: string } }
  | { eventType: "closetag"; value: { name: string } }
  | { eventType: "text"; value: string };
type WorksheetReaderClass = new (args: {
  workbook: WorkbookParts;
  id: number;
  iterator: AsyncIterable<string>;
  options: { worksheets: "emit" };
}) => AsyncIterable<ExcelRow>;

const requireFromExceljs = createRequire(createRequire(import.meta.url).resolve("exceljs"));
const unzipper = requireFromExceljs("unzipper") as { Open: { file(path: string): Promise<ZipDirectory> } };
const WorksheetReader = requireFromExceljs("./lib/stream/xlsx/worksheet-reader.js") as WorksheetReaderClass;
const parseSax = requireFromExceljs("./lib/utils/parse-sax.js") as (
  input: AsyncIterable<string>,
) => AsyncIterable<SaxEvent[]>;

const READER_OPTIONS = {
  sharedStrings: "cache",
  styles: "cache",
  worksheets: "emit",
  hyperlinks: "ignore",
} as const;

/** One zip entry's text, decoded with a single streaming decoder so no character is split. */
async function* entryText(entry: ZipEntry, onChunk?: (text: string) => void): AsyncGenerator<string> {
  const stream = entry.stream();
  const decoder = new TextDecoder("utf-8", { fatal: true });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const text = decoder.decode(chunk, { stream: true });
      onChunk?.(text);
      if (text) yield text;
    }
    const rest = decoder.decode();
    onChunk?.(rest);
    if (rest) yield rest;
  } finally {
    stream.destroy();
  }
}

/** exceljs's part parsers want a Node stream: give them one that carries correctly decoded strings. */
function textStream(entry: ZipEntry): Readable {
  return Readable.from(entryText(entry), { objectMode: true });
}

/** Shared strings: each `<si>`'s text runs joined; phonetic guides (`<rPh>`) left out. */
async function parseSharedStrings(entry: ZipEntry): Promise<string[]> {
  const strings: string[] = [];
  let current: string | null = null;
  let inText = false;
  let phoneticDepth = 0;
  for await (const events of parseSax(entryText(entry))) {
    for (const event of events) {
      if (event.eventType === "opentag") {
        const name = event.value.name;
        if (name === "si") current = "";
        else if (name === "rPh") phoneticDepth++;
        else if (name === "t" && phoneticDepth === 0) inText = true;
      } else if (event.eventType === "closetag") {
        const name = event.value.name;
        if (name === "si") {
          strings.push(current ?? "");
          current = null;
        } else if (name === "rPh") phoneticDepth--;
        else if (name === "t") inText = false;
      } else if (inText && current !== null) {
        current += event.value;
      }
    }
  }
  return strings;
}

interface SheetEntry {
  name: string;
  hidden: boolean;
  entry: ZipEntry;
}

interface Workbook {
  parts: WorkbookParts;
  sheets: SheetEntry[];
  date1904: boolean;
}

function partPath(target: string): string {
  return target.startsWith("/") ? target.slice(1) : posix.normalize(`xl/${target}`);
}

async function openWorkbook(path: string): Promise<Workbook> {
  let directory: ZipDirectory;
  try {
    directory = await unzipper.Open.file(path);
  } catch (cause) {
    throw new SheetReadError(
      "FILE_CORRUPT",
      "the workbook is damaged (not a readable zip file); save it again",
      {
        cause,
      },
    );
  }
  const entries = new Map(directory.files.map((f) => [f.path.replace(/^\//, ""), f]));
  const part = (name: string) => entries.get(name);
  const workbookEntry = part("xl/workbook.xml");
  const relsEntry = part("xl/_rels/workbook.xml.rels");
  if (!workbookEntry || !relsEntry) {
    const what = part("content.xml") ? "an OpenDocument spreadsheet (.ods)" : "not an Excel workbook";
    throw new SheetReadError("UNSUPPORTED_FORMAT", `the file is ${what}; save it as .xlsx or as CSV UTF-8`);
  }
  const parts = new ExcelJS.stream.xlsx.WorkbookReader(path, READER_OPTIONS) as unknown as WorkbookParts;
  await parts._parseWorkbook(textStream(workbookEntry));
  await parts._parseRels(textStream(relsEntry));
  const stylesEntry = part("xl/styles.xml");
  if (stylesEntry) await parts._parseStyles(textStream(stylesEntry));
  const sharedStringsEntry = part("xl/sharedStrings.xml");
  parts.sharedStrings = sharedStringsEntry ? await parseSharedStrings(sharedStringsEntry) : [];
  const rels = parts.workbookRels ?? [];
  const sheets: SheetEntry[] = [];
  for (const sheet of parts.model?.sheets ?? []) {
    const rel = rels.find((r) => r.Id === sheet.rId);
    if (!rel?.Type.endsWith("/worksheet")) continue; // chart sheets have no cells
    const entry = part(partPath(rel.Target));
    if (entry) sheets.push({ name: sheet.name, hidden: (sheet.state ?? "visible") !== "visible", entry });
  }
  return { parts, sheets, date1904: parts.properties?.model?.date1904 === true };
}

function rowsOf(
  workbook: Workbook,
  sheet: SheetEntry,
  onChunk?: (text: string) => void,
): AsyncIterable<ExcelRow> {
  return new WorksheetReader({
    workbook: workbook.parts,
    id: 0,
    iterator: entryText(sheet.entry, onChunk),
    options: { worksheets: "emit" },
  });
}

/** Cells of an exceljs row by 0-based column index. */
function rowCells(row: ExcelRow, date1904: boolean): Map<number, SheetCell> {
  const cells = new Map<number, SheetCell>();
  row.eachCell({ includeEmpty: false }, (cell, column) => {
    const normalised = normaliseCellValue(cell.value, { numFmt: cell.numFmt, date1904 });
    if (normalised.kind !== "empty") cells.set(column - 1, normalised);
  });
  return cells;
}

async function findSheetHeader(
  workbook: Workbook,
  sheet: SheetEntry,
): Promise<{ rowNumber: number; columns: SheetColumn[] } | { firstRows: string[][] }> {
  const firstRows: string[][] = [];
  const rowNumbers: number[] = [];
  for await (const row of rowsOf(workbook, sheet)) {
    if (row.number > HEADER_SEARCH_ROWS) break;
    const cells = rowCells(row, workbook.date1904);
    const texts: string[] = [];
    for (const [index, cell] of cells) texts[index] = cell.text;
    firstRows.push(Array.from(texts, (t) => t ?? ""));
    rowNumbers.push(row.number);
  }
  const found = findHeader(firstRows);
  if (!found) return { firstRows };
  return { rowNumber: rowNumbers[found.index] ?? 1, columns: found.columns };
}

/** Merged ranges and inline rich text, found in the raw sheet XML as it streams past. */
class SheetXmlScanner {
  readonly merges = new Set<string>();
  inlineRichText = false;
  private carry = "";

  feed(text: string): void {
    const window = this.carry + text;
    for (const match of window.matchAll(/<mergeCell\b[^>]*\bref="([A-Z]+[0-9]+:[A-Z]+[0-9]+)"/g)) {
      if (match[1]) this.merges.add(match[1]);
    }
    if (!this.inlineRichText && window.includes("<is>")) {
      // exceljs keeps only the last <t> of an inline string: several <t> (runs, phonetics) would be misread.
      for (const match of window.matchAll(/<is>([\s\S]*?)<\/is>/g)) {
        if ((match[1]?.match(/<t[\s>]/g)?.length ?? 0) > 1) this.inlineRichText = true;
      }
    }
    this.carry = window.slice(-64 * 1024);
  }
}

interface MergedArea {
  range: string;
  top: number;
  left: number;
  bottom: number;
  right: number;
}

function decodeCellRef(ref: string): { row: number; column: number } {
  const match = /^([A-Z]+)([0-9]+)$/.exec(ref);
  let column = 0;
  for (const ch of match?.[1] ?? "A") column = column * 26 + (ch.charCodeAt(0) - 64);
  return { row: Number(match?.[2] ?? 1), column: column - 1 };
}

function mergedAreas(ranges: Iterable<string>): MergedArea[] {
  return [...ranges].map((range) => {
    const [from = "A1", to = "A1"] = range.split(":");
    const a = decodeCellRef(from);
    const b = decodeCellRef(to);
    return { range, top: a.row, left: a.column, bottom: b.row, right: b.column };
  });
}

export async function openXlsx(path: string, options: OpenSheetOptions = {}): Promise<OpenedSheet> {
  const workbook = await openWorkbook(path);
  const names = workbook.sheets.map((s) => `"${s.name}"`).join(", ");
  let chosen: SheetEntry | undefined;
  let header: { rowNumber: number; columns: SheetColumn[] } | undefined;
  if (options.sheet !== undefined) {
    const wanted = options.sheet.trim().toLowerCase();
    chosen = workbook.sheets.find((s) => s.name.trim().toLowerCase() === wanted);
    if (!chosen) {
      throw new SheetReadError(
        "SHEET_NOT_FOUND",
        `there is no sheet "${options.sheet}"; the workbook has ${names || "no worksheets"}`,
      );
    }
    const found = await guard(findSheetHeader(workbook, chosen));
    if ("firstRows" in found) {
      throw new SheetReadError(
        "HEADER_NOT_FOUND",
        `sheet "${chosen.name}": ${describeHeaderSearch(found.firstRows)}`,
      );
    }
    header = found;
  } else {
    for (const sheet of workbook.sheets.filter((s) => !s.hidden)) {
      const found = await guard(findSheetHeader(workbook, sheet));
      if ("columns" in found) {
        chosen = sheet;
        header = found;
        break;
      }
    }
    if (!chosen || !header) {
      throw new SheetReadError(
        "HEADER_NOT_FOUND",
        `no visible sheet (of ${names || "none"}) has a header row with at least "to_account" and "amount" ` +
          `columns in its first ${HEADER_SEARCH_ROWS} rows; add the template's header row, or name the sheet to read`,
      );
    }
  }
  const sheet = chosen;
  const { rowNumber: headerRowNumber, columns } = header;
  const scanner = new SheetXmlScanner();
  const tally = new AmountConventionTally();
  const amountColumn = columns.find((c) => c.canonical === "amount")?.index ?? -1;
  await guard(
    (async () => {
      for await (const row of rowsOf(workbook, sheet, (text) => scanner.feed(text))) {
        if (row.number <= headerRowNumber || amountColumn < 0) continue;
        const amount = rowCells(row, workbook.date1904).get(amountColumn);
        if (amount?.kind === "string") tally.addAmountText(amount.text);
      }
    })(),
  );
  if (scanner.inlineRichText) {
    throw new SheetReadError(
      "FILE_CORRUPT",
      `sheet "${sheet.name}" has cells with inline rich text that cannot be read reliably; ` +
        "open the file in Excel or LibreOffice and save it again as .xlsx",
    );
  }
  const sheetHeader: SheetHeader = {
    columns,
    headerRowNumber,
    sheetName: sheet.name,
    format: "xlsx",
    encoding: "xlsx",
    amountConvention: tally.convention,
  };
  const merges = mergedAreas(scanner.merges);
  return { header: sheetHeader, rows: xlsxRows(workbook, sheet, headerRowNumber, columns, merges) };
}

/** Library errors while reading a damaged part become FILE_CORRUPT; our own errors pass through. */
async function guard<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw asSheetError(error);
  }
}

function asSheetError(error: unknown): SheetReadError {
  if (error instanceof SheetReadError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new SheetReadError("FILE_CORRUPT", `the workbook is damaged (${detail}); save it again`, {
    cause: error,
  });
}

async function* xlsxRows(
  workbook: Workbook,
  sheet: SheetEntry,
  headerRowNumber: number,
  columns: readonly SheetColumn[],
  merges: readonly MergedArea[],
): AsyncGenerator<SheetRow> {
  try {
    for await (const row of rowsOf(workbook, sheet)) {
      if (row.number <= headerRowNumber) continue;
      const values = rowCells(row, workbook.date1904);
      // A row without a value of its own (only the covered part of a merge above it) is blank to the user.
      if (values.size === 0) continue;
      const covering = merges.filter((m) => m.top <= row.number && row.number <= m.bottom);
      const mergedAt = (index: number): string | undefined =>
        covering.find(
          (m) => m.left <= index && index <= m.right && !(m.top === row.number && m.left === index),
        )?.range;
      const cells: Record<string, SheetCell> = {};
      for (const column of columns) {
        const range = mergedAt(column.index);
        cells[column.key] = range
          ? { text: "", kind: "empty", mergedInto: range }
          : (values.get(column.index) ?? EMPTY_CELL);
      }
      const result: SheetRow = { rowNumber: row.number, cells };
      for (const [index, cell] of values) {
        if (index < columns.length) continue;
        result.unheaded ??= {};
        result.unheaded[columnLetter(index)] = cell;
      }
      yield result;
    }
  } catch (error) {
    throw asSheetError(error);
  }
}
