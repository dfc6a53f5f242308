/**
 * An upload's life before it is submitted: validated as a whole when it comes (a remembered column
 * mapping applied first when its headers are not ours), mapped on request, its rows corrected one by
 * one (edit-rows.ts), and, when it is submitted, written as the corrected sheet that is then archived
 * and paid (sheet-copy.ts).
 */
import { mkdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import type { IntakeApi } from "../intake/index.js";
import { SheetReadError, xlsxFirstRows } from "../sheets/index.js";
import {
  type ColumnMapping,
  checkMapping,
  csvFirstLine,
  headerNamesOf,
  likelyHeaderRow,
  MappingError,
  type MappingMemory,
  renameCsvHeader,
} from "./column-mapping.js";
import { writeSheetCopy } from "./sheet-copy.js";
import { cellText, type UploadRecord, type UploadStore } from "./upload-store.js";
import { validateUpload } from "./validate-upload.js";

export interface UploadContext {
  store: UploadStore;
  memory: MappingMemory;
  api: IntakeApi;
}

/** What an upload is before its first validation. */
export type NewUpload = Pick<
  UploadRecord,
  "id" | "fileName" | "sheet" | "path" | "attachments" | "uploadedBy" | "uploadedAt" | "declared"
>;

const HEADERLESS: Omit<UploadRecord, keyof NewUpload | "format" | "sheetProblems" | "header" | "mapping"> = {
  rows: 0,
  validRows: 0,
  invalidRows: 0,
  totals: [],
  rowProblems: 0,
  reportPaths: undefined,
  editedRows: 0,
};

/** The sheet's own headers, as the mapping form offers them. */
export function sheetHeaders(upload: UploadRecord): string[] {
  return upload.header.columns.map((c) => c.original);
}

async function validated(
  ctx: UploadContext,
  base: NewUpload,
  mapping: ColumnMapping | undefined,
): Promise<UploadRecord> {
  const v = await validateUpload(ctx.store, base.id, base.path, {
    api: ctx.api,
    sheet: base.sheet,
    declared: base.declared,
  });
  await ctx.store.clearEdits(base.id);
  return { ...base, ...v, mapping, editedRows: 0 };
}

/**
 * Validates a new upload. A sheet whose header cannot be found (a CSV) or lacks our columns is mapped
 * by the mapping remembered for its headers, when there is one; otherwise it is recorded with its
 * sheet problems and its headers, for the console's mapping form.
 */
export async function validateNewUpload(ctx: UploadContext, base: NewUpload): Promise<UploadRecord> {
  let record: UploadRecord;
  try {
    record = await validated(ctx, base, undefined);
  } catch (err) {
    if (!(err instanceof SheetReadError) || err.code !== "HEADER_NOT_FOUND") throw err;
    const first = await ownHeader(base);
    if (!first) throw err;
    const sheeted = { ...base, sheet: first.sheetName ?? base.sheet };
    const remembered = await ctx.memory.recall(first.headers);
    if (remembered) {
      await writeMappedHeader(sheeted.path, first.format, sheeted.sheet, remembered, first.headers);
      return validated(ctx, sheeted, remembered);
    }
    // Recorded without rows: the person maps the columns, then it is validated.
    return {
      ...sheeted,
      ...HEADERLESS,
      format: first.format,
      mapping: undefined,
      sheetProblems: [{ row: null, column: null, code: "HEADER_NOT_FOUND", message: err.message }],
      header: {
        columns: first.headers.map((h, index) => ({
          index,
          letter: "",
          original: h,
          canonical: null,
          key: h,
        })),
        headerRowNumber: first.rowNumber,
        format: first.format,
        ...(first.sheetName ? { sheetName: first.sheetName } : {}),
        encoding: first.format === "xlsx" ? "xlsx" : "utf-8",
        amountConvention: "dot" as UploadRecord["header"]["amountConvention"],
      },
    };
  }
  if (record.sheetProblems.some((p) => p.code === "COLUMN_MISSING")) {
    const remembered = await ctx.memory.recall(sheetHeaders(record));
    if (remembered) {
      try {
        return await applyMapping(ctx, record, remembered, { remember: false });
      } catch (err) {
        if (!(err instanceof MappingError)) throw err;
      }
    }
  }
  return record;
}

/**
 * The header row of a sheet whose header names none of our columns: a CSV's first line; an XLSX's
 * likeliest row among its first (title rows above it are kept, and its rows keep their numbers).
 */
async function ownHeader(
  base: NewUpload,
): Promise<
  { format: "csv" | "xlsx"; headers: string[]; rowNumber: number; sheetName: string | undefined } | undefined
> {
  if (/\.(csv|txt)$/i.test(base.path)) {
    const first = await csvFirstLine(base.path);
    return first && { format: "csv", headers: first.headers, rowNumber: 1, sheetName: undefined };
  }
  const { sheetName, rows } = await xlsxFirstRows(base.path, { sheet: base.sheet });
  const likely = likelyHeaderRow(rows);
  return likely && { format: "xlsx", headers: likely.headers, rowNumber: likely.rowNumber, sheetName };
}

/** Writes the mapping into a sheet whose header could not be found: our names in its header row. */
async function writeMappedHeader(
  file: string,
  format: "csv" | "xlsx",
  sheet: string | undefined,
  mapping: ColumnMapping,
  headers: readonly string[],
): Promise<void> {
  if (format === "csv") {
    await renameCsvHeader(file, checkMapping(mapping, headers));
    return;
  }
  checkMapping(mapping, headers);
  const copy = `${file}.mapped`;
  await writeSheetCopy(file, copy, {}, { sheet, headerNames: headerNamesOf(mapping) });
  await rename(copy, file);
}

/** Maps the sheet's headers to ours, validates it again, and remembers the mapping for its headers. */
export async function applyMapping(
  ctx: UploadContext,
  upload: UploadRecord,
  mapping: ColumnMapping,
  options: { remember: boolean } = { remember: true },
): Promise<UploadRecord> {
  const headers = sheetHeaders(upload);
  const renames = checkMapping(mapping, headers);
  if (upload.rows === 0 && upload.sheetProblems.some((p) => p.code === "HEADER_NOT_FOUND")) {
    await writeMappedHeader(upload.path, upload.format, upload.sheet, mapping, headers);
  } else {
    const byKey = Object.fromEntries([...renames].map(([i, ours]) => [upload.header.columns[i]!.key, ours]));
    const copy = `${upload.path}.mapped`;
    await writeSheetCopy(
      upload.path,
      copy,
      { headers: byKey, edits: await ctx.store.edits(upload.id) },
      { sheet: upload.sheet },
    );
    await rename(copy, upload.path);
  }
  if (options.remember) await ctx.memory.remember(headers, mapping);
  const record = await validated(ctx, upload, mapping);
  await ctx.store.save(record);
  return record;
}

/**
 * The sheet to submit: the upload's file, or, when rows were corrected in the console, a copy with the
 * corrections written in (the uploaded original is kept beside it, under `.uploaded/`).
 */
export async function sheetToSubmit(ctx: UploadContext, upload: UploadRecord): Promise<string> {
  const edits = await ctx.store.edits(upload.id);
  if (edits.size === 0) return upload.path;
  const dir = path.dirname(upload.path);
  const keep = path.join(dir, ".uploaded", path.basename(upload.path));
  await mkdir(path.dirname(keep), { recursive: true });
  await rm(keep, { force: true });
  const copy = `${upload.path}.corrected`;
  await writeSheetCopy(upload.path, copy, { edits }, { sheet: upload.sheet });
  await rename(upload.path, keep);
  await rename(copy, upload.path);
  await ctx.store.clearEdits(upload.id);
  return upload.path;
}

export interface UploadRowView {
  row: number;
  cells: string[];
  problems: { column: string | null; code: string; message: string }[];
  /** Columns corrected in the console. */
  edited: string[];
  valid: boolean;
}

/** The rows with these numbers, as the console shows them (missing ones left out). */
export async function uploadRowViews(
  ctx: UploadContext,
  upload: UploadRecord,
  rowNumbers: readonly string[],
): Promise<UploadRowView[]> {
  const rows = await ctx.store.rows(upload.id, rowNumbers);
  const edited = await Promise.all(rowNumbers.map((n) => ctx.store.editsOf(upload.id, Number(n))));
  const titleOf = new Map(upload.header.columns.map((c) => [c.key, c.original]));
  return rowNumbers.flatMap((n, i) => {
    const r = rows.get(Number(n));
    if (!r) return [];
    return [
      {
        row: Number(n),
        cells: upload.header.columns.map((_, c) => cellText(r.c[c])),
        problems: r.p.map((p) => ({ column: p.column, code: p.code, message: p.message })),
        edited: Object.keys(edited[i]!).map((k) => titleOf.get(k) ?? k),
        valid: r.m !== undefined,
      },
    ];
  });
}

/** A page of an upload's rows, those that had problems first (or only those). */
export async function uploadRows(
  ctx: UploadContext,
  upload: UploadRecord,
  options: { offset: number; limit: number; problemsOnly: boolean },
): Promise<{ data: UploadRowView[]; total: number; problemRows: number }> {
  const page = await ctx.store.page(upload.id, options);
  return {
    data: await uploadRowViews(ctx, upload, page.rowNumbers),
    total: page.total,
    problemRows: page.problemRows,
  };
}
