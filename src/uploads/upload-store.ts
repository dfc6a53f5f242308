/**
 * Uploaded sheets in Redis, for the console to page through, correct and submit. An upload is kept
 * {@link UploadKeep}: while it is open (not submitted), its rows for `openSeconds` after its last
 * change; once submitted, its rows are dropped and its record (what the upload's address shows: the
 * counts and a link to its batch) stays `submittedSeconds`.
 *
 *   <p>:upload:<id>                 string  the upload's record (JSON): counts, totals, header, files
 *   <p>:upload:<id>:rows            hash    row number → the row's cells (compact) and problems
 *   <p>:upload:<id>:problem-rows    list    row numbers that had problems when validated, sheet order
 *   <p>:upload:<id>:clean-rows      list    the other row numbers, sheet order
 *   <p>:upload:<id>:refs            hash    reference → row number of its first use (duplicates)
 *   <p>:upload:<id>:edits           hash    row number → the cells corrected in the console (JSON)
 *
 * A page of rows ("problems first": the problem list, then the clean one) is one or two LRANGEs and
 * one HMGET, whatever the sheet's size. Rows keep their cells compactly: a string cell as its text, any
 * other kind as `[text, kind, number?, flags?]`, so a cell's kind (a number cell's value) survives.
 */
import type { DeclaredTotals, Problem } from "../intake/index.js";
import type { RedisClient } from "../redis/index.js";
import type { SheetCell, SheetHeader } from "../sheets/types.js";

/** How long uploads stay in Redis (UPLOAD_KEEP_HOURS, UPLOAD_KEEP_SUBMITTED_DAYS). */
export interface UploadKeep {
  /** An upload not submitted: since its last change (upload, correction, mapping). */
  openSeconds: number;
  /** A submitted upload's record (its rows are dropped at submission): since the submission. */
  submittedSeconds: number;
}

/**
 * A day to correct and submit what was uploaded (a sheet left longer is uploaded again: its rows are
 * the largest thing the console keeps); a week to follow a submitted upload's link to its batch.
 */
export const DEFAULT_UPLOAD_KEEP: UploadKeep = { openSeconds: 24 * 3600, submittedSeconds: 7 * 24 * 3600 };
export const UPLOAD_ID_PATTERN = /^upl_[a-f0-9]{20}$/;

export interface CurrencyTotal {
  currency: string;
  rows: number;
  /** Minor units. */
  minor: number;
}

export interface UploadRecord {
  id: string;
  fileName: string;
  format: "csv" | "xlsx";
  /** The XLSX worksheet asked for, if any. */
  sheet: string | undefined;
  /** The sheet file as it will be submitted (after a column mapping, the mapped copy). */
  path: string;
  rows: number;
  validRows: number;
  invalidRows: number;
  totals: CurrencyTotal[];
  /**
   * Problems of the whole sheet (a missing column; a header that could not be found, when the columns
   * must be mapped first): every row is invalid while there are any.
   */
  sheetProblems: (Omit<Problem, "code"> & { code: string })[];
  /** Problems in the rows, as last validated (edits included). */
  rowProblems: number;
  /** The header as read (column keys, decimal convention), for checking corrected rows. */
  header: SheetHeader;
  /** Report files (csv, xlsx) of the validation when the file came, when it had problems. */
  reportPaths: { csv: string; xlsx: string } | undefined;
  /** Files that came with the sheet, relative to its folder. */
  attachments: string[];
  /** Our column → the sheet's header, when the sheet's own headers were mapped to ours. */
  mapping: Record<string, string> | undefined;
  /** Rows corrected in the console. */
  editedRows: number;
  uploadedBy: string;
  uploadedAt: string;
  /** Control totals declared with the upload (rows, minor units per currency); used again on submit. */
  declared?: DeclaredTotals;
  /** The control totals' problems (a total row or declared totals that do not match): they refuse the sheet. */
  controlProblems?: Problem[];
  /** Set once the upload was submitted. */
  batchId?: string;
}

export type CompactCell = string | [text: string, kind: string, number?: number | null, flags?: string];

export interface StoredRow {
  /** The cells by header column position. */
  c: CompactCell[];
  p: Problem[];
  /** A valid row's amount (minor units) and currency, for the totals. */
  m?: [number, string];
}

export function compactCell(cell: SheetCell | undefined): CompactCell {
  if (!cell || cell.kind === "empty") return "";
  if (cell.kind === "string") return cell.text;
  const flags = `${cell.lossy ? "l" : ""}${cell.padded ? "p" : ""}${cell.formula ? "f" : ""}`;
  return flags
    ? [cell.text, cell.kind, cell.number ?? null, flags]
    : [cell.text, cell.kind, cell.number ?? null];
}

export function expandCell(cell: CompactCell | undefined): SheetCell {
  if (cell === undefined || cell === "") return { text: "", kind: "empty" };
  if (typeof cell === "string") return { text: cell, kind: "string" };
  const [text, kind, number, flags = ""] = cell;
  return {
    text,
    kind: kind as SheetCell["kind"],
    ...(typeof number === "number" ? { number } : {}),
    ...(flags.includes("l") ? { lossy: true as const } : {}),
    ...(flags.includes("p") ? { padded: true as const } : {}),
    ...(flags.includes("f") ? { formula: true as const } : {}),
    ...(kind === "error" ? { error: text } : {}),
  };
}

export const cellText = (cell: CompactCell | undefined): string =>
  cell === undefined ? "" : typeof cell === "string" ? cell : cell[0];

export class UploadStore {
  constructor(
    readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly keep: UploadKeep = DEFAULT_UPLOAD_KEEP,
  ) {}

  key(id: string, part?: "rows" | "problem-rows" | "clean-rows" | "refs" | "edits"): string {
    return `${this.prefix}:upload:${id}${part ? `:${part}` : ""}`;
  }

  async save(record: UploadRecord): Promise<void> {
    const seconds = record.batchId ? this.keep.submittedSeconds : this.keep.openSeconds;
    await this.redis.set(this.key(record.id), JSON.stringify(record), "EX", seconds);
  }

  /** What to say when an upload is asked for and not found (gone, or never made). */
  goneMessage(id: string): string {
    const hours = Math.round(this.keep.openSeconds / 3600);
    const days = Math.round(this.keep.submittedSeconds / 86_400);
    return `no upload ${id}: an upload is kept ${hours} h until it is submitted (UPLOAD_KEEP_HOURS) and ${days} days after (UPLOAD_KEEP_SUBMITTED_DAYS); upload the sheet again`;
  }

  async get(id: string): Promise<UploadRecord | undefined> {
    if (!UPLOAD_ID_PATTERN.test(id)) return undefined;
    const json = await this.redis.get(this.key(id));
    return json ? (JSON.parse(json) as UploadRecord) : undefined;
  }

  /** Forgets the rows (before a fresh validation of the same upload, or once it is submitted). */
  async clearRows(id: string): Promise<void> {
    await this.redis.del(
      this.key(id, "rows"),
      this.key(id, "problem-rows"),
      this.key(id, "clean-rows"),
      this.key(id, "refs"),
    );
  }

  /** Appends validated rows (in sheet order), a chunk at a time. */
  async appendRows(
    id: string,
    rows: readonly { rowNumber: number; row: StoredRow; reference: string | undefined }[],
  ): Promise<void> {
    if (rows.length === 0) return;
    const pipeline = this.redis.pipeline();
    const fields: string[] = [];
    const problems: string[] = [];
    const clean: string[] = [];
    const refs: string[] = [];
    for (const { rowNumber, row, reference } of rows) {
      fields.push(String(rowNumber), JSON.stringify(row));
      (row.p.length > 0 ? problems : clean).push(String(rowNumber));
      if (reference) refs.push(reference, String(rowNumber));
    }
    pipeline.hset(this.key(id, "rows"), ...fields);
    if (problems.length > 0) pipeline.rpush(this.key(id, "problem-rows"), ...problems);
    if (clean.length > 0) pipeline.rpush(this.key(id, "clean-rows"), ...clean);
    // The first use of a reference is the one kept (later rows are its duplicates).
    for (let i = 0; i < refs.length; i += 2) pipeline.hsetnx(this.key(id, "refs"), refs[i]!, refs[i + 1]!);
    for (const part of ["rows", "problem-rows", "clean-rows", "refs", "edits"] as const) {
      pipeline.expire(this.key(id, part), this.keep.openSeconds);
    }
    for (const [err] of (await pipeline.exec()) ?? []) if (err) throw err;
  }

  async rows(id: string, rowNumbers: readonly string[]): Promise<Map<number, StoredRow>> {
    const out = new Map<number, StoredRow>();
    if (rowNumbers.length === 0) return out;
    const values = await this.redis.hmget(this.key(id, "rows"), ...rowNumbers);
    values.forEach((json, i) => {
      if (json) out.set(Number(rowNumbers[i]), JSON.parse(json) as StoredRow);
    });
    return out;
  }

  async putRow(id: string, rowNumber: number, row: StoredRow): Promise<void> {
    await this.redis.hset(this.key(id, "rows"), String(rowNumber), JSON.stringify(row));
  }

  /**
   * A page of row numbers: the rows that had problems first, then (unless `problemsOnly`) the others,
   * each in sheet order. `total` is how many rows the listing has.
   */
  async page(
    id: string,
    options: { offset: number; limit: number; problemsOnly: boolean },
  ): Promise<{ rowNumbers: string[]; total: number; problemRows: number }> {
    const [problemRows, cleanRows] = await Promise.all([
      this.redis.llen(this.key(id, "problem-rows")),
      this.redis.llen(this.key(id, "clean-rows")),
    ]);
    const total = options.problemsOnly ? problemRows : problemRows + cleanRows;
    const { offset, limit } = options;
    const rowNumbers: string[] = [];
    if (offset < problemRows) {
      rowNumbers.push(...(await this.redis.lrange(this.key(id, "problem-rows"), offset, offset + limit - 1)));
    }
    const left = limit - rowNumbers.length;
    if (!options.problemsOnly && left > 0) {
      const from = Math.max(0, offset - problemRows);
      rowNumbers.push(...(await this.redis.lrange(this.key(id, "clean-rows"), from, from + left - 1)));
    }
    return { rowNumbers, total, problemRows };
  }

  async referenceOwner(id: string, reference: string): Promise<number | undefined> {
    const owner = await this.redis.hget(this.key(id, "refs"), reference);
    return owner === null ? undefined : Number(owner);
  }

  async claimReference(id: string, reference: string, rowNumber: number): Promise<void> {
    await this.redis.hsetnx(this.key(id, "refs"), reference, String(rowNumber));
  }

  async releaseReference(id: string, reference: string, rowNumber: number): Promise<void> {
    if ((await this.referenceOwner(id, reference)) === rowNumber)
      await this.redis.hdel(this.key(id, "refs"), reference);
  }

  /** The cells corrected so far, by row number, then by column key. */
  async edits(id: string): Promise<Map<number, Record<string, string>>> {
    const all = await this.redis.hgetall(this.key(id, "edits"));
    return new Map(Object.entries(all).map(([row, json]) => [Number(row), JSON.parse(json)]));
  }

  async editsOf(id: string, rowNumber: number): Promise<Record<string, string>> {
    const json = await this.redis.hget(this.key(id, "edits"), String(rowNumber));
    return json ? (JSON.parse(json) as Record<string, string>) : {};
  }

  async putEdits(id: string, rowNumber: number, cells: Record<string, string>): Promise<void> {
    await this.redis.hset(this.key(id, "edits"), String(rowNumber), JSON.stringify(cells));
    // A correction is a change: the whole upload is kept from now on.
    const pipeline = this.redis.pipeline();
    pipeline.expire(this.key(id), this.keep.openSeconds);
    for (const part of ["rows", "problem-rows", "clean-rows", "refs", "edits"] as const) {
      pipeline.expire(this.key(id, part), this.keep.openSeconds);
    }
    for (const [err] of (await pipeline.exec()) ?? []) if (err) throw err;
  }

  async clearEdits(id: string): Promise<void> {
    await this.redis.del(this.key(id, "edits"));
  }
}
