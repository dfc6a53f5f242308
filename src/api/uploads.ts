/**
 * Uploaded sheets: each is stored under `DATA_DIR/uploads/<generated id>/` (the file keeps a cleaned
 * copy of its name, so the batch and its result file carry the name people know), validated against
 * the live accounts, and remembered in Redis (`<prefix>:upload:<id>`, 30 days) until it is submitted.
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { type IntakeApi, type Problem, validateSheet, writeValidationReport } from "../intake/index.js";
import { formatMinor } from "../money/index.js";
import type { RedisClient } from "../redis/index.js";
import { readSheetIsolated } from "../sheets/index.js";
import type { SheetCell } from "../sheets/types.js";

export const UPLOAD_TTL_SECONDS = 30 * 24 * 3600;
/** Rows of the sheet sent back for the console's table (the report has every problem). */
export const PREVIEW_ROWS = 500;
/** Problems listed in the answer; `problemCount` says how many there are in all. */
export const MAX_LISTED_PROBLEMS = 10_000;
export const UPLOAD_ID_PATTERN = /^upl_[a-f0-9]{20}$/;

export interface CurrencyTotal {
  currency: string;
  rows: number;
  /** Major units as text (`1250.00`). */
  amount: string;
}

export interface UploadRecord {
  id: string;
  fileName: string;
  format: "csv" | "xlsx";
  /** The XLSX worksheet asked for, if any. */
  sheet: string | undefined;
  path: string;
  rows: number;
  validRows: number;
  invalidRows: number;
  totals: CurrencyTotal[];
  problemCount: number;
  problems: Problem[];
  /** The sheet's headers and the first rows as shown, with their problems, for the console's table. */
  columns: string[];
  preview: { row: number; cells: string[]; problems: Problem[] }[];
  /** Report files (csv, xlsx) when there are problems. */
  reportPaths: { csv: string; xlsx: string } | undefined;
  uploadedBy: string;
  uploadedAt: string;
  /** Set once the upload was submitted. */
  batchId?: string;
}

export function newUploadId(): string {
  return `upl_${randomBytes(10).toString("hex")}`;
}

/** A name safe on every file system and in a header: ASCII letters, digits, `.`, `-`, `_`. */
export function cleanFileName(name: string): string {
  const base = path
    .basename(name.replaceAll("\\", "/"))
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^\.+/, "");
  const ext = path.extname(base).toLowerCase();
  const stem = base.slice(0, base.length - ext.length).slice(0, 80) || "sheet";
  return `${stem}${ext}`;
}

function cellText(cell: SheetCell | undefined): string {
  if (!cell || cell.kind === "empty") return "";
  return cell.text;
}

/** Validates a stored upload: counts, totals per currency, problems, preview, report files. */
export async function validateUpload(
  filePath: string,
  options: { api: IntakeApi; sheet: string | undefined },
): Promise<Omit<UploadRecord, "id" | "fileName" | "uploadedBy" | "uploadedAt" | "sheet" | "path">> {
  // Read first in a thread with a bounded heap and time (as the watched folder does): an uploaded
  // file past the readers' own limits costs that thread and is refused (SheetReadError, 422), while
  // the server, which also receives webhooks, goes on. Validation then reads a file known to be sane.
  await readSheetIsolated(filePath, options.sheet ? { sheet: options.sheet } : {});
  const validation = await validateSheet(filePath, {
    api: options.api,
    ...(options.sheet ? { sheet: options.sheet } : {}),
  });
  const columns = validation.header.columns.map((c) => c.original);
  const problems: Problem[] = [...validation.sheetProblems];
  const preview: UploadRecord["preview"] = [];
  const money = new Map<string, { rows: number; amount: number }>();
  let rows = 0;
  let validRows = 0;
  for await (const v of validation.rows) {
    rows++;
    if (v.instruction) {
      validRows++;
      const t = money.get(v.instruction.currency) ?? { rows: 0, amount: 0 };
      t.rows++;
      t.amount += v.instruction.amount;
      money.set(v.instruction.currency, t);
    } else {
      problems.push(...v.problems);
    }
    if (preview.length < PREVIEW_ROWS) {
      preview.push({
        row: v.row.rowNumber,
        cells: validation.header.columns.map((c) => cellText(v.row.cells[c.key])),
        problems: v.problems,
      });
    }
  }
  let reportPaths: UploadRecord["reportPaths"];
  if (problems.length > 0) {
    const dir = path.dirname(filePath);
    reportPaths = {
      csv: path.join(dir, "validation-report.csv"),
      xlsx: path.join(dir, "validation-report.xlsx"),
    };
    await writeValidationReport(reportPaths.csv, problems);
    await writeValidationReport(reportPaths.xlsx, problems);
  }
  const totals = [...money.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, t]) => ({ currency, rows: t.rows, amount: formatMinor(t.amount, currency) }));
  const invalidRows = validation.sheetProblems.length > 0 ? rows : rows - validRows;
  return {
    format: validation.header.format,
    rows,
    validRows: validation.sheetProblems.length > 0 ? 0 : validRows,
    invalidRows,
    totals,
    problemCount: problems.length,
    problems: problems.slice(0, MAX_LISTED_PROBLEMS),
    columns,
    preview,
    reportPaths,
  };
}

export class UploadStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private key(id: string): string {
    return `${this.prefix}:upload:${id}`;
  }

  async save(record: UploadRecord): Promise<void> {
    await this.redis.set(this.key(record.id), JSON.stringify(record), "EX", UPLOAD_TTL_SECONDS);
  }

  async get(id: string): Promise<UploadRecord | undefined> {
    if (!UPLOAD_ID_PATTERN.test(id)) return undefined;
    const json = await this.redis.get(this.key(id));
    return json ? (JSON.parse(json) as UploadRecord) : undefined;
  }
}
