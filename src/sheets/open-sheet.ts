/** Opening a payout sheet: picks the reader from the file's content, not only its name. */
import { open } from "node:fs/promises";
import { basename, extname } from "node:path";
import { openCsv } from "./csv/index.js";
import { limitExceeded, sheetLimits } from "./limits.js";
import { type OpenedSheet, type OpenSheetOptions, SheetReadError } from "./types.js";
import { openXlsx } from "./xlsx-reader.js";

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
/** OLE2 compound file: legacy .xls, or any password-protected Office file. */
const OLE2_MAGIC = [0xd0, 0xcf, 0x11, 0xe0];
const CSV_EXTENSIONS = new Set([".csv", ".txt", ".tsv", ".tab", ""]);

export type SheetFormat = "csv" | "xlsx";

/** Which reader a file needs, from its first bytes and name. Pure; throws UNSUPPORTED_FORMAT. */
export function sheetFormatOf(fileName: string, head: Uint8Array): SheetFormat {
  const starts = (magic: number[]) => magic.every((byte, i) => head[i] === byte);
  if (starts(ZIP_MAGIC)) return "xlsx";
  if (starts(OLE2_MAGIC)) {
    throw new SheetReadError(
      "UNSUPPORTED_FORMAT",
      "this is an old Excel .xls file or a password-protected workbook; remove the password and save it as .xlsx",
    );
  }
  const extension = extname(fileName).toLowerCase();
  if (extension === ".xlsx" || extension === ".xlsm") {
    throw new SheetReadError(
      "FILE_CORRUPT",
      "the workbook is damaged (not a zip file); save it again as .xlsx",
    );
  }
  if (!CSV_EXTENSIONS.has(extension)) {
    throw new SheetReadError(
      "UNSUPPORTED_FORMAT",
      `"${extension}" files are not payout sheets; use .xlsx or .csv`,
    );
  }
  return "csv";
}

/**
 * Opens a payout sheet (CSV or XLSX) for streaming. Everything that makes the file unreadable is found
 * here, before the first row: a SheetReadError whose message starts with the file name.
 */
export async function openSheet(path: string, options: OpenSheetOptions = {}): Promise<OpenedSheet> {
  const fileName = basename(path);
  const limits = sheetLimits(options.limits);
  try {
    const head = new Uint8Array(4);
    let size: number;
    try {
      const handle = await open(path, "r");
      try {
        size = (await handle.stat()).size;
        await handle.read(head, 0, 4, 0);
      } finally {
        await handle.close();
      }
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code === "ENOENT") {
        throw new SheetReadError("FILE_NOT_FOUND", "the file does not exist", { cause });
      }
      throw cause;
    }
    if (size > limits.maxFileBytes) throw limitExceeded("maxFileBytes", "the file is", limits);
    const format = sheetFormatOf(fileName, head);
    const opened =
      format === "xlsx" ? await openXlsx(path, { ...options, limits }) : await openCsv(path, limits);
    return { header: opened.header, rows: namingFile(opened.rows, fileName) };
  } catch (error) {
    throw asReadError(error, fileName);
  }
}

/** Errors met while streaming rows (a file changed under us, a damaged part) also name the file. */
async function* namingFile<T>(rows: AsyncIterable<T>, fileName: string): AsyncGenerator<T> {
  try {
    yield* rows;
  } catch (error) {
    throw asReadError(error, fileName);
  }
}

/**
 * Our errors get the file's name. A string or array grown past what V8 allows (a file past every
 * limit in a way they did not foresee) is the file's fault too: refused, never retried as if the
 * disk or the network had failed. Other errors (the disk, permissions) pass as they are.
 */
function asReadError(error: unknown, fileName: string): unknown {
  if (error instanceof SheetReadError) return error.inFile(fileName);
  if (error instanceof RangeError) {
    return new SheetReadError(
      "LIMIT_EXCEEDED",
      `${fileName}: reading it needed more memory than a payout sheet can (${error.message}); ` +
        "check that it is the sheet you meant, or split it into smaller files",
      { cause: error },
    );
  }
  return error;
}
