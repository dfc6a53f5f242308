/** Opening a payout sheet: picks the reader from the file's content, not only its name. */
import { open } from "node:fs/promises";
import { basename, extname } from "node:path";
import { openCsv } from "./csv-reader.js";
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
  try {
    const head = new Uint8Array(4);
    try {
      const handle = await open(path, "r");
      try {
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
    const format = sheetFormatOf(fileName, head);
    const opened = format === "xlsx" ? await openXlsx(path, options) : await openCsv(path);
    return { header: opened.header, rows: namingFile(opened.rows, fileName) };
  } catch (error) {
    throw error instanceof SheetReadError ? error.inFile(fileName) : error;
  }
}

/** Errors met while streaming rows (a file changed under us, a damaged part) also name the file. */
async function* namingFile<T>(rows: AsyncIterable<T>, fileName: string): AsyncGenerator<T> {
  try {
    yield* rows;
  } catch (error) {
    throw error instanceof SheetReadError ? error.inFile(fileName) : error;
  }
}
