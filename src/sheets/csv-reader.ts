/**
 * Streaming CSV reader. The file is read twice, each time in constant memory: a first pass settles
 * the encoding, the header and the amount convention (which needs every amount of the sheet) before a
 * single row is handed out; the second pass yields the rows.
 *
 * Decoding is ours, not papaparse's: papaparse decodes each Buffer chunk on its own, so a "€" split
 * across two chunks becomes U+FFFD. We decode with one streaming TextDecoder and hand papaparse strings.
 * Line endings are normalised to LF before parsing, so CRLF, LF and old-Mac CR files and CRLF inside
 * quoted fields all parse alike.
 *
 * Two numbers are kept per record: the physical `line` it starts on (for quote errors, which are fixed
 * in a text editor) and its `row` as a spreadsheet shows the file (for every row message): a quoted
 * field with line breaks is one row there, and Excel hides a `sep=` first line.
 */
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import Papa from "papaparse";
import { AmountConventionTally } from "../money/index.js";
import { delimiterConventionEvidence, detectDelimiter, parseSepLine, splitCsvLine } from "./delimiter.js";
import { type CsvEncoding, ENCODING_ADVICE, firstUnfitWindows1252Byte, sniffEncoding } from "./encoding.js";
import { describeHeaderSearch, findHeader, HEADER_SEARCH_ROWS } from "./header.js";
import {
  columnLetter,
  EMPTY_CELL,
  type OpenedSheet,
  type SheetCell,
  type SheetColumn,
  type SheetHeader,
  SheetReadError,
  type SheetRow,
} from "./types.js";

const CHUNK_BYTES = 64 * 1024;
/** A record longer than this means a quote was never closed; refuse rather than buffer the whole file. */
const MAX_RECORD_CHARS = 8 * 1024 * 1024;
const PREFIX_CHARS = 256 * 1024;

class InvalidUtf8 extends Error {}

interface DecodeOptions {
  encoding: CsvEncoding;
  bomLength: number;
}

/** Decoded text of the file, newlines normalised to LF. Throws InvalidUtf8 for bad UTF-8 without BOM. */
async function* decodeFile(path: string, { encoding, bomLength }: DecodeOptions): AsyncGenerator<string> {
  const decoder = new TextDecoder(encoding, { fatal: true, ignoreBOM: true });
  const stream = createReadStream(path, { start: bomLength, highWaterMark: CHUNK_BYTES });
  let pendingCarriageReturn = false;
  let lineFeedsSoFar = 0;
  const normalise = (text: string): string => {
    let joined = pendingCarriageReturn ? `\r${text}` : text;
    pendingCarriageReturn = joined.endsWith("\r");
    if (pendingCarriageReturn) joined = joined.slice(0, -1);
    return joined.replace(/\r\n?/g, "\n");
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (encoding === "windows-1252") {
        const bad = firstUnfitWindows1252Byte(chunk);
        if (bad >= 0) {
          const line = lineFeedsSoFar + countByte(chunk.subarray(0, bad), 0x0a) + 1;
          throw new SheetReadError(
            "ENCODING_UNSUPPORTED",
            `line ${line} is neither UTF-8 nor windows-1252 text; ${ENCODING_ADVICE}`,
          );
        }
        lineFeedsSoFar += countByte(chunk, 0x0a);
      }
      let text: string;
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch (error) {
        throw decodeFailure(encoding, bomLength, error);
      }
      const out = normalise(text);
      if (out) yield out;
    }
    let rest: string;
    try {
      rest = decoder.decode();
    } catch (error) {
      throw decodeFailure(encoding, bomLength, error);
    }
    const out = normalise(rest) + (pendingCarriageReturn ? "\n" : "");
    if (out) yield out;
  } finally {
    stream.destroy();
  }
}

function decodeFailure(encoding: CsvEncoding, bomLength: number, cause: unknown): Error {
  if (encoding === "utf-8" && bomLength === 0) return new InvalidUtf8("invalid UTF-8", { cause });
  return new SheetReadError(
    "ENCODING_UNSUPPORTED",
    `the file is not valid ${encoding} text; ${ENCODING_ADVICE}`,
    {
      cause,
    },
  );
}

function countByte(bytes: Uint8Array, byte: number): number {
  let n = 0;
  for (const b of bytes) if (b === byte) n++;
  return n;
}

/** The first `maxChars` characters of an async text stream, and whether the stream ended within them. */
async function readPrefix(chunks: AsyncGenerator<string>, maxChars: number): Promise<string> {
  let prefix = "";
  for await (const chunk of chunks) {
    prefix += chunk;
    if (
      prefix.length >= maxChars ||
      prefix.split("\n", HEADER_SEARCH_ROWS + 2).length > HEADER_SEARCH_ROWS + 1
    )
      break;
  }
  await chunks.return(undefined);
  return prefix;
}

/** Drops the first line of a text stream (Excel's `sep=;` line). */
async function* dropFirstLine(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let dropped = false;
  for await (const chunk of chunks) {
    if (dropped) {
      yield chunk;
      continue;
    }
    const newline = chunk.indexOf("\n");
    if (newline < 0) continue;
    dropped = true;
    if (newline + 1 < chunk.length) yield chunk.slice(newline + 1);
  }
}

export interface CsvRecord {
  fields: string[];
  /** Physical line the record starts on (1-based). */
  line: number;
  /** Row number a spreadsheet shows for this record (1-based; blank lines count, `sep=` does not). */
  row: number;
}

function lineBreaksIn(fields: readonly string[]): number {
  let n = 0;
  for (const field of fields) for (let i = field.indexOf("\n"); i >= 0; i = field.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * Splits LF-normalised CSV text into records with papaparse's parser, chunk by chunk, keeping the
 * unfinished last record for the next chunk. Quote errors make the file unreadable: a stray quote can
 * swallow the following rows into one field, and a row must never be lost silently.
 */
export async function* csvRecords(
  chunks: AsyncIterable<string>,
  delimiter: string,
  firstLine = 1,
): AsyncGenerator<CsvRecord> {
  let partial = "";
  let line = firstLine;
  let row = 1;
  const parseBatch = function* (text: string, last: boolean): Generator<CsvRecord, number> {
    const parser = new Papa.Parser({ delimiter, newline: "\n", quoteChar: '"', escapeChar: '"' });
    const result = parser.parse(text, 0, !last) as {
      data: string[][];
      errors: Array<{ code: string; message: string; row: number }>;
      meta: { cursor: number };
    };
    const lines: number[] = [];
    const firstRow = row;
    for (const fields of result.data) {
      lines.push(line);
      line += 1 + lineBreaksIn(fields);
      row++;
    }
    const error = result.errors.find((e) => e.row < result.data.length || last);
    if (error) {
      const at = lines[error.row] ?? line;
      throw new SheetReadError(
        "FILE_CORRUPT",
        `line ${at}: ${error.message.toLowerCase()} (a quote opens a field but does not close it properly); ` +
          "fix the quotes in that line or re-export the file",
      );
    }
    for (const [i, fields] of result.data.entries())
      yield { fields, line: lines[i] ?? line, row: firstRow + i };
    return result.meta.cursor;
  };
  for await (const chunk of chunks) {
    const aggregate = partial + chunk;
    const consumed = yield* parseBatch(aggregate, false);
    partial = aggregate.slice(consumed);
    if (partial.length > MAX_RECORD_CHARS) {
      throw new SheetReadError(
        "FILE_CORRUPT",
        `line ${line}: a quoted field does not end; fix the quotes in that line or re-export the file`,
      );
    }
  }
  if (partial !== "") yield* parseBatch(partial, true);
}

const isBlank = (fields: readonly string[]): boolean => fields.every((f) => f.trim() === "");

interface CsvLayout {
  decode: DecodeOptions;
  encodingLabel: string;
  delimiter: string;
  sepLine: boolean;
}

function recordsOf(path: string, layout: CsvLayout): AsyncGenerator<CsvRecord> {
  const text = decodeFile(path, layout.decode);
  return layout.sepLine
    ? csvRecords(dropFirstLine(text), layout.delimiter, 2)
    : csvRecords(text, layout.delimiter, 1);
}

/** First pass: the header and, over every data row, the evidence for the amount convention. */
async function scan(
  path: string,
  layout: CsvLayout,
): Promise<{
  headerLine: number;
  headerIndex: number;
  columns: SheetColumn[];
  tally: AmountConventionTally;
}> {
  const firstRecords: string[][] = [];
  let header: ReturnType<typeof findHeader>;
  let headerLine = 0;
  let amountIndex = -1;
  const tally = new AmountConventionTally();
  tally.addEvidence(delimiterConventionEvidence(layout.delimiter));
  let index = 0;
  for await (const record of recordsOf(path, layout)) {
    if (!header) {
      if (index >= HEADER_SEARCH_ROWS) break;
      firstRecords.push(record.fields);
      const found = findHeader([record.fields]);
      if (found) {
        header = { index, columns: found.columns };
        headerLine = record.row;
        amountIndex = found.columns.find((c) => c.canonical === "amount")?.index ?? -1;
      }
    } else if (amountIndex >= 0) {
      const amount = record.fields[amountIndex];
      if (amount) tally.addAmountText(amount);
    }
    index++;
  }
  if (!header) throw new SheetReadError("HEADER_NOT_FOUND", describeHeaderSearch(firstRecords));
  return { headerLine, headerIndex: header.index, columns: header.columns, tally };
}

async function readHead(path: string): Promise<{ head: Uint8Array; size: number }> {
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    const head = new Uint8Array(Math.min(size, 4096));
    await handle.read(head, 0, head.length, 0);
    return { head, size };
  } finally {
    await handle.close();
  }
}

async function decideLayout(path: string, decode: DecodeOptions): Promise<CsvLayout> {
  const prefix = await readPrefix(decodeFile(path, decode), PREFIX_CHARS);
  if (prefix.trim() === "")
    throw new SheetReadError("EMPTY_FILE", "the file is empty; export the sheet again");
  const lines = prefix.split("\n");
  const sep = parseSepLine(lines[0] ?? "");
  const encodingLabel = decode.encoding === "utf-8" && decode.bomLength > 0 ? "utf-8-bom" : decode.encoding;
  if (sep !== undefined) return { decode, encodingLabel, delimiter: sep, sepLine: true };
  const detected = detectDelimiter(lines);
  if (!detected) {
    const firstLine = lines.find((l) => l.trim() !== "") ?? "";
    throw new SheetReadError(
      "HEADER_NOT_FOUND",
      describeHeaderSearch([
        splitCsvLine(firstLine, ",").length > 1 ? splitCsvLine(firstLine, ",") : [firstLine],
      ]),
    );
  }
  return { decode, encodingLabel, delimiter: detected.delimiter, sepLine: false };
}

/** Opens a CSV file: settles encoding, delimiter, header and amount convention, then streams the rows. */
export async function openCsv(path: string): Promise<OpenedSheet> {
  const { head, size } = await readHead(path);
  if (size === 0) throw new SheetReadError("EMPTY_FILE", "the file is empty; export the sheet again");
  const sniffed = sniffEncoding(head);
  if (!sniffed) {
    throw new SheetReadError(
      "ENCODING_UNSUPPORTED",
      `the file looks like UTF-16 or UTF-32 text without a byte-order mark; ${ENCODING_ADVICE}`,
    );
  }
  let layout: CsvLayout;
  let scanned: Awaited<ReturnType<typeof scan>>;
  try {
    layout = await decideLayout(path, sniffed);
    scanned = await scan(path, layout);
  } catch (error) {
    if (!(error instanceof InvalidUtf8)) throw error;
    // Not UTF-8: Excel's plain "CSV" on Western Windows is windows-1252. Accept it only when every byte
    // is printable windows-1252 text (checked while decoding); otherwise ENCODING_UNSUPPORTED.
    const fallback: DecodeOptions = { encoding: "windows-1252", bomLength: 0 };
    layout = await decideLayout(path, fallback);
    scanned = await scan(path, layout);
  }
  const header: SheetHeader = {
    columns: scanned.columns,
    headerRowNumber: scanned.headerLine,
    format: "csv",
    delimiter: layout.delimiter,
    encoding: layout.encodingLabel,
    amountConvention: scanned.tally.convention,
  };
  return { header, rows: csvRows(path, layout, scanned.headerIndex, scanned.columns) };
}

async function* csvRows(
  path: string,
  layout: CsvLayout,
  headerIndex: number,
  columns: readonly SheetColumn[],
): AsyncGenerator<SheetRow> {
  let index = 0;
  try {
    for await (const record of recordsOf(path, layout)) {
      const isData = index > headerIndex;
      index++;
      if (!isData || isBlank(record.fields)) continue;
      yield toRow(record, columns);
    }
  } catch (error) {
    // The first pass decoded the whole file, so this means the file changed while it was being read.
    if (error instanceof InvalidUtf8) {
      throw new SheetReadError("FILE_CORRUPT", "the file changed while it was being read; process it again");
    }
    throw error;
  }
}

function textCell(text: string): SheetCell {
  return text === "" ? EMPTY_CELL : { text, kind: "string" };
}

/** One CSV record as a row: one cell per header column, non-empty cells beyond the header as `unheaded`. */
export function toRow(record: CsvRecord, columns: readonly SheetColumn[]): SheetRow {
  const cells: Record<string, SheetCell> = {};
  for (const column of columns) cells[column.key] = textCell(record.fields[column.index] ?? "");
  const row: SheetRow = { rowNumber: record.row, cells };
  for (let i = columns.length; i < record.fields.length; i++) {
    const text = record.fields[i] ?? "";
    if (text.trim() === "") continue;
    row.unheaded ??= {};
    row.unheaded[columnLetter(i)] = textCell(text);
  }
  return row;
}
