/**
 * Streaming XLSX reader.
 *
 * The zip is read with yauzl (`./xlsx/zip-archive.ts`); every part is parsed by our own scanners in
 * `./xlsx/`: the small parts (workbook, relationships, styles) whole, worksheets and shared strings, the
 * big parts, as streams. exceljs (4.4.0, unmaintained) reads no workbook here: it has several ways to
 * misread a sheet that this module closes:
 * 1. It reads zip entries in file order. LibreOffice and others write `styles.xml` or `workbook.xml`
 *    after the worksheets, and then dates arrive as serial numbers and sheet names are lost. We open the
 *    zip's central directory, then read workbook, relationships, styles and shared strings first,
 *    whatever their order, each part's data by random access.
 * 2. Its SAX helper decodes every chunk of XML on its own, so a UTF-8 character split between two
 *    chunks becomes U+FFFD. We decode each entry with one streaming TextDecoder.
 * 3. It keeps only the last `<t>` of a string, so Japanese phonetic guides (`<rPh>`) replace the text
 *    and inline rich text loses its first runs. Our scanners join the runs and drop phonetics.
 * 4. It ignores `<mergeCell>` in streaming mode (exceljs issue #3000), and merges are written after all
 *    rows. We collect them while scanning the sheet once before handing out rows, and mark the covered
 *    cells (`mergedInto`); they are not filled from the top-left cell (see `SheetCell.mergedInto`).
 * 5. It knows only `date1904="1"`; LibreOffice may write `"true"`, which shifted every date by 4 years.
 * Speed was the other reason: exceljs's worksheet reader builds a SAX event, a row object and a cell
 * object with a style per cell, several times slower than the scan in `./xlsx/worksheet-scanner.ts`.
 *
 * Every part is read within the limits of `./limits.ts` (size after inflating, ratio to the compressed
 * size, characters per row and per cell, no DTD, a deadline), so a hostile file is refused early
 * instead of taking the process's memory or time.
 *
 * Memory stays flat: rows are streamed, and the shared-strings table is held compactly (see
 * `./xlsx/shared-strings.ts`). Each sheet is read twice: once to find the header, the merges and the
 * amount convention (only the amount column's cells are looked at after the header), once to hand out
 * rows.
 */
import { posix } from "node:path";
import { AmountConventionTally } from "../money/index.js";
import { describeHeaderSearch, findHeader, HEADER_SEARCH_ROWS, type HeaderNames } from "./header.js";
import { DtdGuard, limitExceeded, ReadDeadline, type SheetLimits, sheetLimits } from "./limits.js";
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
import {
  type CellContext,
  cellFormatTable,
  interpretCell,
  type PartKind,
  parseCellFormats,
  parseRelationships,
  parseWorkbook,
  type RawRow,
  SharedStringsParser,
  WorksheetScanner,
  ZipArchive,
  type ZipPart,
} from "./xlsx/index.js";

/** One part's text, decoded with a single streaming decoder so no character is split, within the limits. */
async function* entryText(workbook: Workbook, part: ZipPart, kind: PartKind): AsyncGenerator<string> {
  const stream = await workbook.zip.openPart(part, kind);
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const dtd = new DtdGuard(part.name);
  let inflated = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      inflated += chunk.length;
      workbook.zip.checkInflated(part, inflated);
      workbook.deadline.check();
      const text = decoder.decode(chunk, { stream: true });
      if (text) {
        dtd.check(text);
        yield text;
      }
    }
    const rest = decoder.decode();
    if (rest) {
      dtd.check(rest);
      yield rest;
    }
  } finally {
    stream.destroy();
  }
}

async function wholeText(workbook: Workbook, part: ZipPart): Promise<string> {
  let text = "";
  for await (const chunk of entryText(workbook, part, "whole")) text += chunk;
  return text;
}

async function parseSharedStrings(workbook: Workbook, part: ZipPart) {
  const parser = new SharedStringsParser(workbook.limits);
  for await (const text of entryText(workbook, part, "streamed")) parser.feed(text);
  return parser.end();
}

interface SheetEntry {
  name: string;
  hidden: boolean;
  part: ZipPart;
}

interface Workbook {
  zip: ZipArchive;
  limits: SheetLimits;
  deadline: ReadDeadline;
  sheets: SheetEntry[];
  cells: CellContext;
}

function partPath(target: string): string {
  return target.startsWith("/") ? target.slice(1) : posix.normalize(`xl/${target}`);
}

async function openWorkbook(path: string, limits: SheetLimits): Promise<Workbook> {
  const zip = await ZipArchive.open(path, limits);
  try {
    return await readWorkbookParts(zip, limits);
  } catch (error) {
    zip.close();
    throw asSheetError(error);
  }
}

async function readWorkbookParts(zip: ZipArchive, limits: SheetLimits): Promise<Workbook> {
  const workbookPart = zip.part("xl/workbook.xml");
  const relsPart = zip.part("xl/_rels/workbook.xml.rels");
  if (!workbookPart || !relsPart) {
    const what = zip.part("content.xml") ? "an OpenDocument spreadsheet (.ods)" : "not an Excel workbook";
    throw new SheetReadError("UNSUPPORTED_FORMAT", `the file is ${what}; save it as .xlsx or as CSV UTF-8`);
  }
  // Filled in below; entryText needs the archive, the limits and the deadline only.
  const workbook: Workbook = {
    zip,
    limits,
    deadline: new ReadDeadline(limits),
    sheets: [],
    cells: {
      sharedStrings: new SharedStringsParser().end(),
      date1904: false,
      ...cellFormatTable(() => undefined),
    },
  };
  const info = parseWorkbook(await wholeText(workbook, workbookPart));
  const rels = parseRelationships(await wholeText(workbook, relsPart));
  const stylesPart = zip.part("xl/styles.xml");
  const formatOf = stylesPart ? parseCellFormats(await wholeText(workbook, stylesPart)) : () => undefined;
  const sharedStringsPart = zip.part("xl/sharedStrings.xml");
  const sharedStrings = sharedStringsPart
    ? await parseSharedStrings(workbook, sharedStringsPart)
    : new SharedStringsParser().end();
  for (const sheet of info.sheets) {
    const rel = rels.get(sheet.relationshipId);
    if (!rel?.type.endsWith("/worksheet")) continue; // chart sheets have no cells
    const found = zip.part(partPath(rel.target));
    if (found) workbook.sheets.push({ name: sheet.name, hidden: sheet.hidden, part: found });
  }
  workbook.cells = { sharedStrings, date1904: info.date1904, ...cellFormatTable(formatOf) };
  return workbook;
}

/** The sheet's rows as the scanner completes them, a chunk of XML at a time. */
async function* scannedRows(
  workbook: Workbook,
  sheet: SheetEntry,
  scanner: WorksheetScanner,
): AsyncGenerator<RawRow[]> {
  for await (const text of entryText(workbook, sheet.part, "streamed")) {
    const rows = scanner.feed(text);
    if (rows.length > 0) yield rows;
  }
  const rest = scanner.end();
  if (rest.length > 0) yield rest;
}

/** Cell texts of a row by 0-based column, "" where there is nothing: what the header search reads. */
function rowTexts(row: RawRow, context: CellContext): string[] {
  const texts: string[] = [];
  for (const raw of row.cells) {
    const cell = interpretCell(raw, context);
    if (cell && cell.kind !== "empty") texts[raw.column] = cell.text;
  }
  return Array.from(texts, (t) => t ?? "");
}

/** A sheet's first rows (their cell texts and row numbers), when no header was found among them. */
interface FirstRows {
  firstRows: string[][];
  rowNumbers: number[];
}

interface SheetScan {
  header: { rowNumber: number; columns: SheetColumn[] };
  merges: MergedArea[];
  tally: AmountConventionTally;
}

/**
 * Reads a sheet once before its rows are handed out: finds the header among the first rows, then
 * collects the merged ranges and the amount column's text amounts (for the amount convention) over the
 * whole sheet. After the header only the amount column's cells are read. Stops early, with the first
 * rows for the error message, when the sheet has no header.
 */
async function scanSheet(
  workbook: Workbook,
  sheet: SheetEntry,
  headerNames?: HeaderNames,
): Promise<SheetScan | FirstRows> {
  const context = workbook.cells;
  const scanner = new WorksheetScanner(workbook.limits);
  const tally = new AmountConventionTally();
  const firstRows: string[][] = [];
  const first: RawRow[] = [];
  let header: SheetScan["header"] | undefined;
  let amountColumn = -1;
  let searching = true;

  const tallyRow = (row: RawRow) => {
    if (!header || row.number <= header.rowNumber) return;
    for (const raw of row.cells) {
      if (raw.column !== amountColumn) continue;
      // Only text can hold a decimal mark; number cells do not depend on the convention.
      if (raw.type !== "s" && raw.type !== "str" && raw.type !== "inlineStr") continue;
      const cell = interpretCell(raw, context);
      if (cell?.kind === "string") tally.addAmountText(cell.text);
    }
  };
  const decide = (): boolean => {
    searching = false;
    const found = findHeader(firstRows, headerNames);
    if (!found) return false;
    header = { rowNumber: first[found.index]?.number ?? 1, columns: found.columns };
    amountColumn = found.columns.find((c) => c.canonical === "amount")?.index ?? -1;
    scanner.onlyColumn = amountColumn;
    for (const row of first) tallyRow(row);
    return true;
  };

  for await (const rows of scannedRows(workbook, sheet, scanner)) {
    for (const row of rows) {
      if (searching) {
        if (row.number <= HEADER_SEARCH_ROWS) {
          first.push(row);
          firstRows.push(rowTexts(row, context));
          continue;
        }
        if (!decide()) return { firstRows, rowNumbers: first.map((r) => r.number) };
      }
      tallyRow(row);
    }
  }
  if (searching && !decide()) return { firstRows, rowNumbers: first.map((r) => r.number) };
  if (!header) return { firstRows, rowNumbers: first.map((r) => r.number) };
  return { header, merges: mergedAreas(scanner.merges), tally };
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

/**
 * The merged areas that span a row, for rows asked in ascending order (as sheets store them): areas
 * enter when the rows reach their top and leave after their bottom, so a sheet with many merges costs
 * no more per row than the merges around it. A row number that goes back starts over.
 */
class MergeIndex {
  private readonly byTop: MergedArea[];
  private next = 0;
  private active: MergedArea[] = [];
  private lastRow = 0;

  constructor(areas: readonly MergedArea[]) {
    // Stable sort: areas with the same top keep their order in the file.
    this.byTop = [...areas].sort((a, b) => a.top - b.top);
  }

  covering(row: number): readonly MergedArea[] {
    if (this.byTop.length === 0) return this.active;
    if (row < this.lastRow) {
      this.next = 0;
      this.active = [];
    }
    this.lastRow = row;
    while (this.next < this.byTop.length && (this.byTop[this.next] as MergedArea).top <= row) {
      this.active.push(this.byTop[this.next] as MergedArea);
      this.next++;
    }
    if (this.active.some((m) => m.bottom < row)) this.active = this.active.filter((m) => m.bottom >= row);
    return this.active;
  }
}

/** The merged range that covers a cell without being its top-left cell, if any. */
function coveredBy(areas: readonly MergedArea[], row: number, column: number): string | undefined {
  for (const m of areas) {
    if (m.left <= column && column <= m.right && !(m.top === row && m.left === column)) return m.range;
  }
  return undefined;
}

export async function openXlsx(path: string, options: OpenSheetOptions = {}): Promise<OpenedSheet> {
  const workbook = await openWorkbook(path, sheetLimits(options.limits));
  try {
    const { sheet, scan } = await chooseSheet(workbook, options.sheet, options.headerNames);
    const { rowNumber: headerRowNumber, columns } = scan.header;
    const sheetHeader: SheetHeader = {
      columns,
      headerRowNumber,
      sheetName: sheet.name,
      format: "xlsx",
      encoding: "xlsx",
      amountConvention: scan.tally.convention,
    };
    return { header: sheetHeader, rows: xlsxRows(workbook, sheet, headerRowNumber, columns, scan.merges) };
  } catch (error) {
    workbook.zip.close();
    throw error;
  }
}

/** The sheet named by the caller, else the first visible one with our header; and its first scan. */
async function chooseSheet(
  workbook: Workbook,
  name: string | undefined,
  headerNames?: HeaderNames,
): Promise<{ sheet: SheetEntry; scan: SheetScan }> {
  const names = workbook.sheets.map((s) => `"${s.name}"`).join(", ");
  if (name !== undefined) {
    const wanted = name.trim().toLowerCase();
    const chosen = workbook.sheets.find((s) => s.name.trim().toLowerCase() === wanted);
    if (!chosen) {
      throw new SheetReadError(
        "SHEET_NOT_FOUND",
        `there is no sheet "${name}"; the workbook has ${names || "no worksheets"}`,
      );
    }
    const found = await guard(scanSheet(workbook, chosen, headerNames));
    if ("firstRows" in found) {
      throw new SheetReadError(
        "HEADER_NOT_FOUND",
        `sheet "${chosen.name}": ${describeHeaderSearch(found.firstRows)}`,
      );
    }
    return { sheet: chosen, scan: found };
  }
  for (const sheet of workbook.sheets.filter((s) => !s.hidden)) {
    const found = await guard(scanSheet(workbook, sheet, headerNames));
    if ("header" in found) return { sheet, scan: found };
  }
  throw new SheetReadError(
    "HEADER_NOT_FOUND",
    `no visible sheet (of ${names || "none"}) has a header row with at least "to_account" and "amount" ` +
      `columns in its first ${HEADER_SEARCH_ROWS} rows; add the template's header row, or name the sheet to read`,
  );
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
  const context = workbook.cells;
  const mergeIndex = new MergeIndex(merges);
  const { maxCellChars } = workbook.limits;
  try {
    for await (const rows of scannedRows(workbook, sheet, new WorksheetScanner(workbook.limits))) {
      for (const row of rows) {
        if (row.number <= headerRowNumber) continue;
        // Cells with a value, by 0-based column (a later cell for the same column wins).
        const values: SheetCell[] = [];
        let count = 0;
        let unheaded: number[] | undefined;
        for (const raw of row.cells) {
          const cell = interpretCell(raw, context);
          if (!cell || cell.kind === "empty") continue;
          if (cell.text.length > maxCellChars) {
            throw limitExceeded(
              "maxCellChars",
              `cell ${columnLetter(raw.column)}${row.number} of sheet "${sheet.name}" holds`,
              workbook.limits,
            );
          }
          if (values[raw.column] === undefined) {
            count++;
            if (raw.column >= columns.length) {
              unheaded ??= [];
              unheaded.push(raw.column);
            }
          }
          values[raw.column] = cell;
        }
        // A row without a value of its own (only the covered part of a merge above it) is blank to the user.
        if (count === 0) continue;
        const covering = mergeIndex.covering(row.number);
        const cells: Record<string, SheetCell> = {};
        for (let i = 0; i < columns.length; i++) {
          const column = columns[i] as SheetColumn;
          const range = covering.length > 0 ? coveredBy(covering, row.number, column.index) : undefined;
          cells[column.key] = range
            ? { text: "", kind: "empty", mergedInto: range }
            : (values[column.index] ?? EMPTY_CELL);
        }
        const result: SheetRow = { rowNumber: row.number, cells };
        if (unheaded) {
          result.unheaded = {};
          for (const index of unheaded.sort((a, b) => a - b)) {
            result.unheaded[columnLetter(index)] = values[index] as SheetCell;
          }
        }
        yield result;
      }
    }
  } catch (error) {
    throw asSheetError(error);
  } finally {
    workbook.zip.close();
  }
}

/**
 * The first rows of a worksheet that has no header of ours (the one named, else the first visible
 * one): what a person maps to our columns. Their cell texts with their row numbers.
 */
export async function xlsxFirstRows(
  path: string,
  options: { sheet?: string | undefined; limits?: Partial<SheetLimits> } = {},
): Promise<{ sheetName: string; rows: { rowNumber: number; cells: string[] }[] }> {
  const workbook = await openWorkbook(path, sheetLimits(options.limits));
  try {
    const wanted = options.sheet?.trim().toLowerCase();
    const sheet = wanted
      ? workbook.sheets.find((s) => s.name.trim().toLowerCase() === wanted)
      : workbook.sheets.find((s) => !s.hidden);
    if (!sheet) throw new SheetReadError("SHEET_NOT_FOUND", `there is no sheet "${options.sheet ?? ""}"`);
    const found = await guard(scanSheet(workbook, sheet));
    const rows =
      "firstRows" in found
        ? found.firstRows.map((cells, i) => ({ rowNumber: found.rowNumbers[i]!, cells }))
        : [];
    return { sheetName: sheet.name, rows };
  } finally {
    workbook.zip.close();
  }
}
