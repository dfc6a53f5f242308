/**
 * Streaming CSV reader. The file is read twice, each time in constant memory: a first pass settles
 * the encoding, the header and the amount convention (which needs every amount of the sheet) before a
 * single row is handed out; the second pass yields the rows. The first pass builds no records for
 * plain CSV (`scanPlainCsv`); anything else goes through papaparse's records (`scanCsvRecords`).
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
import { PayoutsError } from "../../errors/index.js";
import { type AmountConvention, AmountConventionTally } from "../../money/index.js";
import { describeHeaderSearch, findHeader, HEADER_SEARCH_ROWS } from "../header.js";
import {
  DEFAULT_SHEET_LIMITS,
  limitExceeded,
  ReadDeadline,
  type SheetLimits,
  sheetLimits,
} from "../limits.js";
import {
  columnLetter,
  EMPTY_CELL,
  type OpenedSheet,
  type SheetCell,
  type SheetColumn,
  type SheetHeader,
  SheetReadError,
  type SheetRow,
} from "../types.js";
import { delimiterConventionEvidence, detectDelimiter, parseSepLine, splitCsvLine } from "./delimiter.js";
import { type CsvEncoding, ENCODING_ADVICE, firstUnfitWindows1252Byte, sniffEncoding } from "./encoding.js";

const CHUNK_BYTES = 64 * 1024;
const PREFIX_CHARS = 256 * 1024;

type RecordLimits = Pick<SheetLimits, "maxRowChars">;

class InvalidUtf8 extends PayoutsError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("ENCODING_UNSUPPORTED", message, { kind: "invalid-input", cause: options.cause });
  }
}

interface DecodeOptions {
  encoding: CsvEncoding;
  bomLength: number;
}

/** The limits a read keeps to, and its deadline (one for the whole file, every pass included). */
interface ReadBounds {
  limits: SheetLimits;
  deadline: ReadDeadline;
}

/** Decoded text of the file, newlines normalised to LF. Throws InvalidUtf8 for bad UTF-8 without BOM. */
async function* decodeFile(
  path: string,
  { encoding, bomLength }: DecodeOptions,
  bounds: ReadBounds,
): AsyncGenerator<string> {
  const decoder = new TextDecoder(encoding, { fatal: true, ignoreBOM: true });
  const stream = createReadStream(path, { start: bomLength, highWaterMark: CHUNK_BYTES });
  let pendingCarriageReturn = false;
  let lineFeedsSoFar = 0;
  const normalise = (text: string): string => {
    let joined = pendingCarriageReturn ? `\r${text}` : text;
    pendingCarriageReturn = joined.endsWith("\r");
    if (pendingCarriageReturn) joined = joined.slice(0, -1);
    // Most files have LF or CRLF endings: finding no CR is cheaper than a replace that finds none, and a
    // plain-text replaceAll of CRLF is cheaper than the regex; lone CRs (old Mac) are rare.
    if (joined.indexOf("\r") < 0) return joined;
    const crlfDone = joined.replaceAll("\r\n", "\n");
    return crlfDone.indexOf("\r") < 0 ? crlfDone : crlfDone.replace(/\r/g, "\n");
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bounds.deadline.check();
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

function newlinesBefore(text: string, end: number): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0 && i < end; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * Splits LF-normalised CSV text into records with papaparse's parser, chunk by chunk, keeping the
 * unfinished last record for the next chunk; one array of records per chunk, so a reader steps through
 * them without an async hop per record. Quote errors make the file unreadable: a stray quote can
 * swallow the following rows into one field, and a row must never be lost silently.
 */
async function* csvRecordBatches(
  chunks: AsyncIterable<string>,
  delimiter: string,
  firstLine = 1,
  limits: RecordLimits = DEFAULT_SHEET_LIMITS,
): AsyncGenerator<CsvRecord[]> {
  let partial = "";
  let line = firstLine;
  let row = 1;
  const parseBatch = (text: string, last: boolean): { records: CsvRecord[]; consumed: number } => {
    const parser = new Papa.Parser({ delimiter, newline: "\n", quoteChar: '"', escapeChar: '"' });
    const result = parser.parse(text, 0, !last) as {
      data: string[][];
      errors: Array<{ code: string; message: string; row: number }>;
      meta: { cursor: number };
    };
    const error = result.errors.find((e) => e.row < result.data.length || last);
    if (error) {
      let at = line;
      for (const [i, fields] of result.data.entries()) {
        if (i === error.row) break;
        at += 1 + lineBreaksIn(fields);
      }
      throw new SheetReadError(
        "FILE_CORRUPT",
        `line ${at}: ${error.message.toLowerCase()} (a quote opens a field but does not close it properly); ` +
          "fix the quotes in that line or re-export the file",
      );
    }
    // Before the last chunk every record ends with a newline: when the chunk holds no more newlines than
    // records, no field has a line break and each record starts on the next line.
    const oneLineEach = !last && newlinesBefore(text, result.meta.cursor) === result.data.length;
    const records: CsvRecord[] = [];
    for (const fields of result.data) {
      records.push({ fields, line, row });
      line += oneLineEach ? 1 : 1 + lineBreaksIn(fields);
      row++;
    }
    return { records, consumed: result.meta.cursor };
  };
  for await (const chunk of chunks) {
    const aggregate = partial + chunk;
    const { records, consumed } = parseBatch(aggregate, false);
    if (records.length > 0) yield records;
    partial = aggregate.slice(consumed);
    // A record is kept whole until its end arrives: bound it, or a quote never closed (or one endless
    // line) buffers the whole file.
    if (partial.length > limits.maxRowChars) {
      throw limitExceeded(
        "maxRowChars",
        `line ${line}: the record starting there (often a quote that never closes) is`,
        limits,
      );
    }
  }
  if (partial !== "") {
    const { records } = parseBatch(partial, true);
    if (records.length > 0) yield records;
  }
}

/** The records of LF-normalised CSV text, one by one (see `csvRecordBatches`). */
export async function* csvRecords(
  chunks: AsyncIterable<string>,
  delimiter: string,
  firstLine = 1,
  limits: RecordLimits = DEFAULT_SHEET_LIMITS,
): AsyncGenerator<CsvRecord> {
  for await (const batch of csvRecordBatches(chunks, delimiter, firstLine, limits)) yield* batch;
}

const isBlank = (fields: readonly string[]): boolean => fields.every((f) => f.trim() === "");

interface CsvLayout {
  bounds: ReadBounds;
  decode: DecodeOptions;
  encodingLabel: string;
  delimiter: string;
  sepLine: boolean;
}

function textOf(path: string, layout: CsvLayout): AsyncGenerator<string> {
  const text = decodeFile(path, layout.decode, layout.bounds);
  return layout.sepLine ? dropFirstLine(text) : text;
}

function recordBatchesOf(path: string, layout: CsvLayout): AsyncGenerator<CsvRecord[]> {
  return csvRecordBatches(
    textOf(path, layout),
    layout.delimiter,
    layout.sepLine ? 2 : 1,
    layout.bounds.limits,
  );
}

/** What the first pass finds: where the header is, its columns, and the sheet's amount convention. */
export interface CsvScan {
  /** Row number of the header as a spreadsheet shows it (`CsvRecord.row`). */
  headerLine: number;
  /** Position of the header among the records (0-based; blank records count). */
  headerIndex: number;
  columns: SheetColumn[];
  amountConvention: AmountConvention;
}

/**
 * First pass: the header and, over every data row, the evidence for the amount convention. The quick
 * scan reads plain CSV; anything else it leaves to the full scan over papaparse's records, which also
 * finds every error (a stray quote, a missing header) in the order it always has.
 */
async function scan(path: string, layout: CsvLayout): Promise<CsvScan> {
  try {
    const quick = await scanPlainCsv(textOf(path, layout), layout.delimiter, layout.bounds.limits);
    if (quick) return quick;
  } catch (error) {
    // A limit or the deadline stands whichever scan meets it.
    if (error instanceof SheetReadError && error.code === "LIMIT_EXCEEDED") throw error;
    // Whatever else went wrong (undecodable bytes, a duplicate column), the full scan meets it again
    // and reports it exactly as before; nothing was handed out yet.
  }
  return scanCsvRecords(recordBatchesOf(path, layout), layout.delimiter);
}

/** The first pass over papaparse's records: reads every file the reader accepts, and refuses the rest. */
export async function scanCsvRecords(
  batches: AsyncIterable<readonly CsvRecord[]>,
  delimiter: string,
): Promise<CsvScan> {
  const firstRecords: string[][] = [];
  let header: ReturnType<typeof findHeader>;
  let headerLine = 0;
  let amountIndex = -1;
  const tally = new AmountConventionTally();
  tally.addEvidence(delimiterConventionEvidence(delimiter));
  let index = 0;
  search: for await (const batch of batches) {
    for (const record of batch) {
      if (!header) {
        if (index >= HEADER_SEARCH_ROWS) break search;
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
  }
  if (!header) throw new SheetReadError("HEADER_NOT_FOUND", describeHeaderSearch(firstRecords));
  return {
    headerLine,
    headerIndex: header.index,
    columns: header.columns,
    amountConvention: tally.convention,
  };
}

/** Characters papaparse will not take as a delimiter (it silently uses "," instead). */
const UNUSABLE_DELIMITERS = new Set(["\r", "\n", '"', "\uFEFF"]);

/**
 * The first pass over plain CSV without building records: strictly RFC 4180 (a field is quoted from its
 * first character to a closing quote directly followed by the delimiter, a line break or the end, with
 * `""` for a quote inside; an unquoted field holds no quote). For such text papaparse's records are the
 * obvious ones, so this finds the same header and convention as `scanCsvRecords`, several times faster:
 * it looks at the fields of the first rows and the amount column below them, and skips the rest of
 * each line. Returns undefined, having stopped early, for anything else: a quote papaparse would read
 * leniently or refuse, no header within the first rows, a duplicate column, a record that grows without
 * end. `scanCsvRecords` then decides, with its own messages.
 */
export async function scanPlainCsv(
  chunks: AsyncIterable<string>,
  delimiter: string,
  limits: RecordLimits = DEFAULT_SHEET_LIMITS,
): Promise<CsvScan | undefined> {
  if (delimiter.length !== 1 || UNUSABLE_DELIMITERS.has(delimiter)) return undefined;
  const scanner = new PlainCsvScanner(delimiter, limits.maxRowChars);
  for await (const chunk of chunks) {
    if (!scanner.feed(chunk, false)) return undefined;
  }
  if (!scanner.feed("", true)) return undefined;
  return scanner.result();
}

const QUOTE = 0x22;
const LINE_FEED = 0x0a;

class PlainCsvScanner {
  private partial = "";
  /** Records seen so far (blank ones count, as in `csvRecords`). */
  private records = 0;
  private header: { index: number; columns: SheetColumn[]; amountIndex: number } | undefined;
  private readonly tally = new AmountConventionTally();
  private readonly delimiterCode: number;

  constructor(
    private readonly delimiter: string,
    private readonly maxRecordChars: number,
  ) {
    this.delimiterCode = delimiter.charCodeAt(0);
    this.tally.addEvidence(delimiterConventionEvidence(delimiter));
  }

  result(): CsvScan | undefined {
    if (!this.header) return undefined;
    return {
      headerLine: this.header.index + 1,
      headerIndex: this.header.index,
      columns: this.header.columns,
      amountConvention: this.tally.convention,
    };
  }

  /**
   * Takes the next piece of text (`last`: the end of the file) and scans every record it completes.
   * False when the text is not plain CSV or the header is not where it must be.
   */
  feed(chunk: string, last: boolean): boolean {
    const text = this.partial + chunk;
    const consumed = this.scanRecords(text, last);
    if (consumed < 0) return false;
    this.partial = text.slice(consumed);
    // csvRecords refuses a record this long; let it say so.
    return this.partial.length <= this.maxRecordChars;
  }

  /** Scans the complete records of `text`; the position after the last one, or -1 for irregular text. */
  private scanRecords(text: string, last: boolean): number {
    const { delimiter, delimiterCode } = this;
    const length = text.length;
    let nextDelimiter = text.indexOf(delimiter);
    let nextNewline = text.indexOf("\n");
    let nextQuote = text.indexOf('"');
    let recordStart = 0;
    let position = 0;
    let field = 0;
    /** Every field of the record while the header is still sought; otherwise undefined. */
    let fields: string[] | undefined = this.header ? undefined : [];

    for (;;) {
      if (position === length) {
        if (position === recordStart) return recordStart; // the text ends with a complete record
        if (!last) return recordStart; // a delimiter at the very end: the record goes on in the next chunk
        // "a," at the end of the file: one more, empty, field ends the record.
        if (!this.takeField(field, "", fields) || !this.endRecord(fields)) return -1;
        return length;
      }
      // The rest of a record beyond the fields we want, without a quote: straight to its end.
      const header = this.header;
      if (
        header &&
        field > header.amountIndex &&
        (nextQuote < 0 || nextQuote > nextNewline) &&
        nextNewline >= 0
      ) {
        this.records++;
        position = recordStart = nextNewline + 1;
        field = 0;
        nextNewline = text.indexOf("\n", position);
        if (nextDelimiter >= 0 && nextDelimiter < position) nextDelimiter = text.indexOf(delimiter, position);
        continue;
      }
      let value: string;
      let fieldEnd: number; // index of the character that ends the field (delimiter or newline), or length
      if (text.charCodeAt(position) === QUOTE) {
        let search = position + 1;
        let close: number;
        for (;;) {
          close = text.indexOf('"', search);
          if (close < 0 || (close + 1 === length && !last)) {
            // No closing quote yet (or its next character is still to come).
            return last ? -1 : recordStart;
          }
          if (text.charCodeAt(close + 1) === QUOTE) {
            search = close + 2;
            continue;
          }
          break;
        }
        fieldEnd = close + 1;
        if (fieldEnd < length) {
          const after = text.charCodeAt(fieldEnd);
          if (after !== delimiterCode && after !== LINE_FEED) return -1; // `"a"b`: papaparse's call
        }
        value = text.slice(position + 1, close).replaceAll('""', '"');
        nextQuote = text.indexOf('"', fieldEnd);
        if (nextDelimiter >= 0 && nextDelimiter < fieldEnd) nextDelimiter = text.indexOf(delimiter, fieldEnd);
        if (nextNewline >= 0 && nextNewline < fieldEnd) nextNewline = text.indexOf("\n", fieldEnd);
      } else {
        const atDelimiter = nextDelimiter >= 0 && (nextNewline < 0 || nextDelimiter < nextNewline);
        fieldEnd = atDelimiter ? nextDelimiter : nextNewline;
        if (fieldEnd < 0) {
          if (!last) return recordStart;
          fieldEnd = length;
        }
        if (nextQuote >= 0 && nextQuote < fieldEnd) return -1; // a quote inside an unquoted field
        value = text.slice(position, fieldEnd);
      }
      if (!this.takeField(field, value, fields)) return -1;
      if (fieldEnd < length && text.charCodeAt(fieldEnd) === delimiterCode) {
        field++;
        position = fieldEnd + 1;
        nextDelimiter = text.indexOf(delimiter, position);
        continue;
      }
      // The record ends at a newline or at the end of the file.
      if (!this.endRecord(fields)) return -1;
      if (fieldEnd === length) return length;
      position = recordStart = fieldEnd + 1;
      field = 0;
      fields = this.header ? undefined : [];
      nextNewline = text.indexOf("\n", position);
    }
  }

  /** One field of the current record; false when the scan must give up. */
  private takeField(index: number, value: string, fields: string[] | undefined): boolean {
    if (fields) {
      fields.push(value);
      return true;
    }
    if (this.header && index === this.header.amountIndex && value) this.tally.addAmountText(value);
    return true;
  }

  /** The end of a record: looks for the header among the first ones. False when the scan must give up. */
  private endRecord(fields: string[] | undefined): boolean {
    const index = this.records++;
    if (!fields) return true;
    if (index >= HEADER_SEARCH_ROWS) return false; // HEADER_NOT_FOUND: the full scan words it
    const found = findHeader([fields]); // may throw DUPLICATE_COLUMN: the full scan throws it again
    if (found) {
      const amountIndex = found.columns.find((c) => c.canonical === "amount")?.index ?? -1;
      if (amountIndex < 0) return false;
      this.header = { index, columns: found.columns, amountIndex };
    }
    return true;
  }
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

async function decideLayout(path: string, decode: DecodeOptions, bounds: ReadBounds): Promise<CsvLayout> {
  const prefix = await readPrefix(decodeFile(path, decode, bounds), PREFIX_CHARS);
  if (prefix.trim() === "")
    throw new SheetReadError("EMPTY_FILE", "the file is empty; export the sheet again");
  const lines = prefix.split("\n");
  const sep = parseSepLine(lines[0] ?? "");
  const encodingLabel = decode.encoding === "utf-8" && decode.bomLength > 0 ? "utf-8-bom" : decode.encoding;
  if (sep !== undefined) return { bounds, decode, encodingLabel, delimiter: sep, sepLine: true };
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
  return { bounds, decode, encodingLabel, delimiter: detected.delimiter, sepLine: false };
}

/** Opens a CSV file: settles encoding, delimiter, header and amount convention, then streams the rows. */
export async function openCsv(path: string, limits: SheetLimits = sheetLimits()): Promise<OpenedSheet> {
  const bounds: ReadBounds = { limits, deadline: new ReadDeadline(limits) };
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
  let scanned: CsvScan;
  try {
    layout = await decideLayout(path, sniffed, bounds);
    scanned = await scan(path, layout);
  } catch (error) {
    if (!(error instanceof InvalidUtf8)) throw error;
    // Not UTF-8: Excel's plain "CSV" on Western Windows is windows-1252. Accept it only when every byte
    // is printable windows-1252 text (checked while decoding); otherwise ENCODING_UNSUPPORTED.
    const fallback: DecodeOptions = { encoding: "windows-1252", bomLength: 0 };
    layout = await decideLayout(path, fallback, bounds);
    scanned = await scan(path, layout);
  }
  const header: SheetHeader = {
    columns: scanned.columns,
    headerRowNumber: scanned.headerLine,
    format: "csv",
    delimiter: layout.delimiter,
    encoding: layout.encodingLabel,
    amountConvention: scanned.amountConvention,
  };
  return { header, rows: csvRows(path, layout, scanned.headerIndex, scanned.columns) };
}

/**
 * The data rows of the file below the header, blank ones skipped. A plain iterator rather than an async
 * generator: a row from the chunk in hand is handed out without an async hop, which is most of them.
 * It serves one reader at a time (as `for await` reads).
 */
function csvRows(
  path: string,
  layout: CsvLayout,
  headerIndex: number,
  columns: readonly SheetColumn[],
): AsyncIterableIterator<SheetRow> {
  const batches = recordBatchesOf(path, layout);
  let batch: readonly CsvRecord[] = [];
  let at = 0;
  let index = 0;
  const nextInBatch = (): SheetRow | undefined => {
    while (at < batch.length) {
      const record = batch[at++] as CsvRecord;
      const isData = index > headerIndex;
      index++;
      if (!isData || isBlank(record.fields)) continue;
      return toRow(record, columns, layout.bounds.limits.maxCellChars);
    }
    return undefined;
  };
  const pull = async (): Promise<IteratorResult<SheetRow>> => {
    for (;;) {
      let result: IteratorResult<CsvRecord[]>;
      try {
        result = await batches.next();
      } catch (error) {
        // The first pass decoded the whole file, so this means the file changed while it was being read.
        if (error instanceof InvalidUtf8) {
          throw new SheetReadError(
            "FILE_CORRUPT",
            "the file changed while it was being read; process it again",
          );
        }
        throw error;
      }
      if (result.done) return { value: undefined, done: true };
      batch = result.value;
      at = 0;
      const row = nextInBatch();
      if (row) return { value: row, done: false };
    }
  };
  const rows: AsyncIterableIterator<SheetRow> = {
    [Symbol.asyncIterator]: () => rows,
    next: () => {
      const row = nextInBatch();
      return row ? Promise.resolve({ value: row, done: false }) : pull();
    },
    return: async () => {
      batch = [];
      await batches.return(undefined);
      return { value: undefined, done: true };
    },
  };
  return rows;
}

function textCell(text: string): SheetCell {
  return text === "" ? EMPTY_CELL : { text, kind: "string" };
}

/** One CSV record as a row: one cell per header column, non-empty cells beyond the header as `unheaded`. */
export function toRow(
  record: CsvRecord,
  columns: readonly SheetColumn[],
  maxCellChars = DEFAULT_SHEET_LIMITS.maxCellChars,
): SheetRow {
  for (let i = 0; i < record.fields.length; i++) {
    if ((record.fields[i] as string).length > maxCellChars) {
      throw limitExceeded(
        "maxCellChars",
        `line ${record.line}: the field in column ${columnLetter(i)} holds`,
        { maxCellChars },
      );
    }
  }
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
