/**
 * Writing a batch's result file (I/O): rows streamed from Redis in chunks into writeTable, which
 * writes atomically (temp file, then rename) and keeps every cell formula-safe (docs/design.md §3.7).
 *
 * A 100k-row batch is never held in memory as records: the row keys are put in sheet order first
 * (reading only their row numbers), then the rows are read and written a chunk at a time.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { ApprovalStore, approvalsCell } from "../approvals/index.js";
import { readStop, withPauseShown } from "../batch-control/index.js";
import type { BatchRecord, BatchStore, RowOutcome } from "../batches/index.js";
import { ROW_CHUNK, staticRowNumber } from "../batches/index.js";
import { PayoutsError } from "../errors/index.js";
import type { TableRow } from "../files/index.js";
import { writeTable } from "../files/index.js";
import { resultColumns, resultNumberFormats, resultTableRows, statusColumnIndex } from "./result-table.js";

export type ResultFormat = "csv" | "xlsx";
export const RESULT_FORMATS: readonly ResultFormat[] = ["csv", "xlsx"];

export interface WriteResultOptions {
  /** Default: the sheet's own format (CSV → CSV, XLSX → XLSX). */
  format?: ResultFormat | undefined;
  /** Default: {@link defaultResultPath} under `dataDir`. */
  outPath?: string | undefined;
  /** DATA_DIR; needed unless `outPath` is given. */
  dataDir?: string | undefined;
}

export interface WrittenResult {
  path: string;
  format: ResultFormat;
  /** Data rows written (valid and invalid rows). */
  rows: number;
}

/** The batch asked for is not in Redis. */
export class UnknownBatchError extends PayoutsError {
  override readonly name = "UnknownBatchError";
  constructor(readonly batchId: string) {
    super("NOT_FOUND", `no batch ${batchId} in Redis (run \`payouts status\` to list batches)`, {
      kind: "not-found",
    });
  }
}

/** How many rows size the XLSX columns (the rest of the file is streamed after them). */
const WIDTH_SAMPLE_ROWS = 200;

/**
 * `DATA_DIR/outbox/<sheet name without extension>.<batch id>.result.<ext>`: the batch id keeps two
 * submissions of `payroll.xlsx` apart; the sheet's name lets people find it.
 */
export function defaultResultPath(
  dataDir: string,
  batch: Pick<BatchRecord, "id" | "sourceName">,
  format: ResultFormat,
): string {
  const stem = path.parse(path.basename(batch.sourceName)).name.replace(/[^\p{L}\p{N}._ -]+/gu, "_");
  return path.join(dataDir, "outbox", `${stem || "batch"}.${batch.id}.result.${format}`);
}

/** Writes the batch's result file and returns where, or throws {@link UnknownBatchError}. */
export async function writeResultFile(
  store: BatchStore,
  batchId: string,
  options: WriteResultOptions = {},
): Promise<WrittenResult> {
  const batch = await store.getBatch(batchId);
  if (!batch) throw new UnknownBatchError(batchId);
  const format = options.format ?? batch.sheet.format;
  let target = options.outPath;
  if (target === undefined) {
    if (options.dataDir === undefined) throw new Error("writeResultFile needs outPath or dataDir");
    target = defaultResultPath(options.dataDir, batch, format);
  }
  target = path.resolve(target);
  await mkdir(path.dirname(target), { recursive: true });

  const invalid = await store.invalidRows(batchId);
  // A batch that needed approval says who approved it (and when) on every line (docs/operating.md "Approvals").
  const approval = await new ApprovalStore(store.redis, { prefix: store.keys.prefix }).get(batchId);
  const approvals = approval ? approvalsCell(approval) : undefined;
  // A paused batch says so on the rows it has not sent (a cancel shows on the rows themselves).
  const { paused } = await readStop(store, batchId);
  const rows = rowsInSheetOrder(store, batchId);
  const lines = resultTableRows(batch, paused ? withPauseShown(rows, paused) : rows, invalid, approvals);
  // The first lines are read ahead to size the XLSX columns, then written first.
  const sample: TableRow[] = [];
  if (format === "xlsx") {
    for (let next = await lines.next(); !next.done; next = await lines.next()) {
      sample.push(next.value);
      if (sample.length >= WIDTH_SAMPLE_ROWS) break;
    }
  }
  const summary = await writeTable(target, {
    columns: resultColumns(batch, approvals !== undefined),
    rows: (async function* () {
      yield* sample;
      yield* lines;
    })(),
    format,
    sheetName: "Result",
    statusColumn: statusColumnIndex(batch),
    widthSample: sample,
    // Text as `t="inlineStr"`, never exceljs's default `t="str"` (a formula's cached text).
    inlineStrings: true,
    numberFormat: resultNumberFormats(batch),
  });
  return { path: target, format, rows: summary.rows };
}

/**
 * A batch's valid rows in sheet order, read ROW_CHUNK at a time from the batch's order list. A batch
 * without one (recorded by an older version) is ordered from the rows' static records (row numbers
 * only, read in chunks and dropped), then each chunk of rows is read.
 */
export async function* rowsInSheetOrder(store: BatchStore, batchId: string): AsyncGenerator<RowOutcome> {
  // The batch's order list: one page of keys at a time, so memory stays flat whatever the batch size.
  let page = await store.rowKeysInOrder(batchId, 0, ROW_CHUNK);
  if (page !== undefined) {
    for (let start = 0; page.length > 0; ) {
      yield* await store.rowOutcomesPage(batchId, page);
      start += page.length;
      if (page.length < ROW_CHUNK) break;
      page = (await store.rowKeysInOrder(batchId, start, ROW_CHUNK)) ?? [];
    }
    return;
  }
  // No order list (a batch recorded before there was one): sort the keys by row number.
  const keys = await store.rowKeys(batchId);
  const numbered: { rowKey: string; rowNumber: number }[] = [];
  for (let i = 0; i < keys.length; i += ROW_CHUNK) {
    const chunk = keys.slice(i, i + ROW_CHUNK);
    // The layout's documented static hash (redis-layout.ts): row key → record starting with its number.
    const statics = await store.redis.hmget(store.keys.rows(batchId), ...chunk);
    chunk.forEach((rowKey, j) => {
      const json = statics[j];
      if (json) numbered.push({ rowKey, rowNumber: staticRowNumber(json) });
    });
  }
  numbered.sort((a, b) => a.rowNumber - b.rowNumber);
  for (let i = 0; i < numbered.length; i += ROW_CHUNK) {
    yield* await store.rowOutcomesPage(
      batchId,
      numbered.slice(i, i + ROW_CHUNK).map((n) => n.rowKey),
    );
  }
}
