/**
 * One row corrected by hand (the console's "correct and retry"): the operator's new amount, payee or
 * delivery is written into the row's own sheet cells, the row is checked again exactly as a row of a
 * new sheet (through a one-row copy of the batch's sheet layout, so the same columns are read the same
 * way), and the gate (`admit`) says whether it starts now or waits for approval.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  type BatchRecord,
  type BatchStore,
  enqueueQueuedRows,
  type RowEnqueuer,
  type RowRecord,
} from "../batches/index.js";
import { CRLF, csvRecord, UTF8_BOM } from "../files/index.js";
import { fetchLiveContext, type IntakeApi } from "../intake/index.js";
import { canonicalColumn, openSheet, type SheetRow } from "../sheets/index.js";
import {
  type CorrectionAdmission,
  ledgerOf,
  type ResultFileRowOutcome,
  recheckRow,
} from "./result-file-retry.js";
import { whyNotRetryable } from "./row-selection.js";
import { startAttempt } from "./start-attempt.js";

/** The fields a row may be corrected in by hand, by their sheet column name. */
export const CORRECTABLE_FIELDS = ["amount", "to_account", "delivery"] as const;
export type CorrectableField = (typeof CORRECTABLE_FIELDS)[number];

export interface CorrectRowOptions {
  store: BatchStore;
  enqueuer: RowEnqueuer;
  api: IntakeApi;
  batch: BatchRecord;
  row: RowRecord;
  /** The new cell text per field (absent: unchanged). */
  edits: Partial<Record<CorrectableField, string>>;
  admit: CorrectionAdmission;
  /** Who, for the row's history. */
  by: string;
}

export type CorrectRowOutcome = Omit<ResultFileRowOutcome, "fileRowNumber">;

export async function correctRow(options: CorrectRowOptions): Promise<CorrectRowOutcome> {
  const { batch, row } = options;
  const refuse = (detail: string): CorrectRowOutcome => ({
    outcome: "refused",
    batchRowNumber: row.rowNumber,
    detail,
  });
  const notRetryable = whyNotRetryable(row.state, row.errorCode);
  if (notRetryable) return refuse(`not corrected: ${notRetryable}`);
  const { columns, keys } = batch.sheet;
  const values = columns.map((c, i) => {
    const field = canonicalColumn(c) as CorrectableField | null;
    const edit = field && CORRECTABLE_FIELDS.includes(field) ? options.edits[field] : undefined;
    if (edit !== undefined) return edit.trim();
    const value = row.source?.[keys[i] ?? ""];
    return value === undefined || value === null ? "" : value;
  });
  for (const field of CORRECTABLE_FIELDS) {
    if (options.edits[field] !== undefined && !columns.some((c) => canonicalColumn(c) === field)) {
      return refuse(
        `not corrected: the batch's sheet has no ${field} column; correct its result file instead`,
      );
    }
  }
  const dir = await mkdtemp(path.join(tmpdir(), "payouts-correct-"));
  try {
    const file = path.join(dir, "row.csv");
    await writeFile(file, `${UTF8_BOM}${csvRecord(columns)}${csvRecord(values)}${CRLF}`);
    const opened = await openSheet(file);
    let sheetRow: SheetRow | undefined;
    for await (const r of opened.rows) {
      sheetRow = r;
      break;
    }
    if (!sheetRow) return refuse("not corrected: the row could not be read back");
    const checked = await recheckRow({
      row: sheetRow,
      header: opened.header,
      sourceCount: columns.length,
      keys,
      live: await fetchLiveContext(options.api),
      api: options.api,
      sheetDir: dir,
      original: row.instruction,
    });
    if (!checked.ok)
      return refuse(`the correction is invalid, nothing was retried: ${checked.problems.join("; ")}`);
    const correction = { instruction: checked.instruction, source: checked.source };
    const verdict = (await options.admit(batch, [{ row, correction }])).get(row.rowKey);
    const changes = verdict?.changes.length ? { changes: verdict.changes } : {};
    if (verdict?.refused !== undefined) {
      return { outcome: "refused", batchRowNumber: row.rowNumber, ...changes, detail: verdict.refused };
    }
    if (verdict && verdict.held !== false) {
      return { outcome: "held", batchRowNumber: row.rowNumber, ...changes, detail: verdict.held };
    }
    const started = await startAttempt({
      store: options.store,
      ledger: ledgerOf(options.api),
      batch,
      row,
      note: `corrected by ${options.by} and retried`,
      correction,
    });
    if (started.kind === "adopted") {
      return {
        outcome: "left-alone",
        batchRowNumber: row.rowNumber,
        detail: `not retried: its earlier attempt did pay after all (payment ${started.paymentId}, now ${started.state})`,
      };
    }
    if (started.kind !== "started") {
      return { outcome: "left-alone", batchRowNumber: row.rowNumber, detail: started.reason };
    }
    if (batch.enqueueComplete) await enqueueQueuedRows(options.store, options.enqueuer, batch);
    return {
      outcome: "retried",
      batchRowNumber: row.rowNumber,
      ...changes,
      attempt: started.attempt,
      externalId: started.externalId,
      detail: `retried as attempt ${started.attempt} (externalId ${started.externalId})`,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
