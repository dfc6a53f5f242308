/**
 * `payouts audit <batch>`: every payment the service holds for the batch (its list filtered by the
 * metadata naming the batch, a page of 50 at a time) held against every row (compare.ts), and the
 * report written as CSV or JSON. What it costs: ceil(payments / 50) list requests and one read of the
 * rows those payments name; memory: a byte per row number, never the batch's payments.
 *
 * Which rows record a payment the service did not show is known without reading every row: rows in a
 * payment's state (submitted, in-progress, completed, failed, canceled, returned) are exactly the rows
 * that record a payment (the row scripts set the two together, and a new attempt clears both), and the
 * batch counts them. Only when fewer of their payments were seen are the rows read to name them.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { type AuditedRow, type BatchStore, type LedgerCheck, PAYMENT_ROW_STATES } from "../batches/index.js";
import { PayoutsError } from "../errors/index.js";
import { type TableFormat, writeTable } from "../files/index.js";
import type { Payment, PayoutsClient } from "../payouts-api/index.js";
import { defaultResultPath } from "../results/index.js";
import { rowMetadataValue } from "../row-identity/index.js";
import {
  type AuditDifference,
  type AuditRow,
  comparePayment,
  DIFFERENCE_KINDS,
  type DifferenceKind,
  ledgerSummary,
  missingPayment,
  paymentAttempt,
  paymentWithoutRow,
  rowIsBehind,
} from "./compare.js";

export class UnknownAuditBatchError extends PayoutsError {
  override readonly name = "UnknownAuditBatchError";
  constructor(readonly batchId: string) {
    super("NOT_FOUND", `no batch ${batchId} in Redis (run \`payouts status\` to list batches)`, {
      kind: "not-found",
    });
  }
}

export interface AuditReport {
  batchId: string;
  /** Valid rows held against the ledger. */
  rows: number;
  /** Payments the service holds for the batch. */
  payments: number;
  /** Rows without a difference. */
  matched: number;
  differences: AuditDifference[];
  byKind: Record<DifferenceKind, number>;
  /** List requests the audit made. */
  pages: number;
  /**
   * Rows whose own payment is newer than what they hold and disagrees with them (compare.ts
   * `rowIsBehind`), still so once handed to `follow`: their differences go once the rows follow.
   */
  behind: number;
  summary: string;
  at: string;
}

export interface AuditBatchOptions {
  store: BatchStore;
  client: Pick<PayoutsClient, "payments">;
  batchId: string;
  now?: () => Date;
  /**
   * Where payments go whose rows have not followed them yet (compare.ts `rowIsBehind`: a return after
   * the row's last look, say) before they are compared. The worker applies them (the row follows, with
   * its notification); the CLI and the API mark their rows for the reconciler. The rows are read again
   * afterwards: a row that followed matches, one that did not is reported.
   */
  follow?: ((payments: readonly Payment[]) => Promise<unknown>) | undefined;
}

/** A set of row numbers, a byte each, growing with the largest number seen. */
class RowNumberSet {
  private bits = new Uint8Array(1024);
  /** How many numbers the set holds. */
  size = 0;
  add(n: number): void {
    if (this.has(n)) return;
    if (n >= this.bits.length) {
      const grown = new Uint8Array(Math.max(n + 1, this.bits.length * 2));
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[n] = 1;
    this.size++;
  }
  has(n: number): boolean {
    return n < this.bits.length && this.bits[n] === 1;
  }
}

/** Holds every payment the service has for the batch against every row. */
export async function auditBatch(options: AuditBatchOptions): Promise<AuditReport> {
  const { store, client, batchId } = options;
  const batch = await store.getBatch(batchId);
  if (!batch) throw new UnknownAuditBatchError(batchId);
  const differences: AuditDifference[] = [];
  const withDifference = new RowNumberSet();
  /** Rows whose recorded payment the ledger showed; rows that record none but had one of their attempt. */
  const recordedSeen = new RowNumberSet();
  const attemptSeen = new RowNumberSet();
  const note = (list: AuditDifference[]) => {
    for (const d of list) {
      differences.push(d);
      if (d.rowNumber !== undefined) withDifference.add(d.rowNumber);
    }
  };
  /** Rows by `payouts_row` value, for the values the batch's row keys do not give directly. */
  let longKeys: Map<string, string> | undefined;
  const rowKeyOf = async (value: string, found: boolean): Promise<string | undefined> => {
    if (found) return value;
    if (value.length < 100) return undefined;
    if (!longKeys) {
      longKeys = new Map();
      for await (const keys of store.rowKeyPages(batchId)) {
        for (const k of keys) if (k.length >= 100) longKeys.set(rowMetadataValue(k), k);
      }
    }
    return longKeys.get(value);
  };

  /** Rows in a payment state whose recorded payment the ledger showed. */
  let recordedSeenCount = 0;
  let payments = 0;
  let pages = 0;
  /** Rows whose own payment is newer than what they show (a row with two such payments counts once). */
  const behindRows = new RowNumberSet();
  for await (const page of client.payments.listPages({ metadata: { payouts_batch: batchId }, limit: 50 })) {
    pages++;
    payments += page.length;
    const values = [...new Set(page.map((p) => p.metadata?.payouts_row ?? ""))].filter((v) => v !== "");
    const direct = new Map((await store.auditRows(batchId, values)).map((r) => [r.rowKey, r]));
    const rows = new Map<string, AuditedRow>(direct);
    for (const value of values) {
      if (direct.has(value)) continue;
      const rowKey = await rowKeyOf(value, false);
      const row = rowKey ? (await store.auditRows(batchId, [rowKey]))[0] : undefined;
      if (row) rows.set(value, row);
    }
    if (options.follow) await followBehind(options, page, rows);
    for (const payment of page) {
      const row = rows.get(payment.metadata?.payouts_row ?? "");
      if (!row) {
        note([paymentWithoutRow(payment)]);
        continue;
      }
      const recorded = payment.id === row.paymentId && !recordedSeen.has(row.rowNumber);
      if (rowIsBehind(row, payment)) behindRows.add(row.rowNumber);
      note(checkPayment(row, payment, recordedSeen, attemptSeen));
      if (recorded && PAYMENT_ROW_STATES.includes(row.state)) recordedSeenCount++;
    }
  }

  const progress = await store.progress(batchId);
  const rowCount = progress?.batch.rowCount ?? batch.rowCount;
  const recordedRows = PAYMENT_ROW_STATES.reduce((n, state) => n + (progress?.counts[state] ?? 0), 0);
  if (recordedSeenCount < recordedRows) {
    for await (const rowKeys of store.rowKeyPages(batchId)) {
      for (const row of await store.auditRows(batchId, rowKeys)) {
        if (row.paymentId !== undefined && !recordedSeen.has(row.rowNumber)) note([missingPayment(row)]);
      }
    }
  }

  // Rows with a difference count once each, however many they have.
  const matched = Math.max(0, rowCount - withDifference.size);
  const byKind = Object.fromEntries(DIFFERENCE_KINDS.map((k) => [k, 0])) as Record<DifferenceKind, number>;
  for (const d of differences) byKind[d.kind]++;
  differences.sort(
    (a, b) => (a.rowNumber ?? Number.MAX_SAFE_INTEGER) - (b.rowNumber ?? Number.MAX_SAFE_INTEGER),
  );
  return {
    batchId,
    rows: rowCount,
    payments,
    matched,
    differences,
    byKind,
    pages,
    behind: behindRows.size,
    summary: ledgerSummary(rowCount, matched, byKind, behindRows.size),
    at: (options.now?.() ?? new Date()).toISOString(),
  };
}

/** Hands on the page's payments whose rows are behind them, and reads those rows again. */
async function followBehind(
  options: AuditBatchOptions,
  page: readonly Payment[],
  rows: Map<string, AuditedRow>,
): Promise<void> {
  const behind = page.filter((p) => {
    const row = rows.get(p.metadata?.payouts_row ?? "");
    return row !== undefined && rowIsBehind(row, p);
  });
  if (behind.length === 0) return;
  await options.follow!(behind);
  const values = [...new Set(behind.map((p) => p.metadata!.payouts_row!))];
  const rowKeys = values.map((v) => rows.get(v)!.rowKey);
  const fresh = new Map((await options.store.auditRows(options.batchId, rowKeys)).map((r) => [r.rowKey, r]));
  values.forEach((value, i) => {
    const row = fresh.get(rowKeys[i]!);
    if (row) rows.set(value, row);
  });
}

function checkPayment(
  row: AuditedRow,
  payment: Payment,
  recordedSeen: RowNumberSet,
  attemptSeen: RowNumberSet,
): AuditDifference[] {
  const audited: AuditRow = row;
  const ofAttempt = paymentAttempt(payment) === row.attempt;
  const seenBefore = ofAttempt && attemptSeen.has(row.rowNumber);
  if (ofAttempt) attemptSeen.add(row.rowNumber);
  if (payment.id === row.paymentId) recordedSeen.add(row.rowNumber);
  return comparePayment(audited, payment, seenBefore);
}

/** The outcome to keep on the batch (BatchStore.recordLedgerCheck). */
export function ledgerCheckOf(report: AuditReport): LedgerCheck {
  return {
    at: report.at,
    rows: report.rows,
    payments: report.payments,
    matched: report.matched,
    differences: report.differences.length,
    byKind: Object.fromEntries(Object.entries(report.byKind).filter(([, n]) => n > 0)),
    ...(report.behind > 0 ? { behind: report.behind } : {}),
    summary: report.summary,
  };
}

export const AUDIT_REPORT_COLUMNS = [
  "kind",
  "row",
  "reference",
  "payment_id",
  "expected",
  "found",
  "message",
] as const;

/** Writes the report's differences (one line each) as CSV or JSON, atomically. */
export async function writeAuditReport(
  report: AuditReport,
  file: string,
  format: Extract<TableFormat, "csv" | "json">,
): Promise<void> {
  await writeTable(file, {
    format,
    columns: AUDIT_REPORT_COLUMNS,
    rows: report.differences.map((d) => [
      d.kind,
      d.rowNumber ?? null,
      d.reference ?? null,
      d.paymentId ?? null,
      d.expected ?? null,
      d.found ?? null,
      d.message,
    ]),
  });
}

export const AUDIT_REPORT_FORMATS = ["csv", "json"] as const;
export type AuditReportFormat = (typeof AUDIT_REPORT_FORMATS)[number];

/** Where a batch's audit report goes unless told: beside its result file, `<sheet>.<batch>.ledger.<ext>`. */
export function defaultAuditPath(
  dataDir: string,
  batch: { id: string; sourceName: string },
  format: AuditReportFormat,
): string {
  return defaultResultPath(dataDir, batch, "csv").replace(/\.result\.csv$/, `.ledger.${format}`);
}

export interface RecordedAudit {
  report: AuditReport;
  /** Where the report was written, when it was. */
  reportPath?: string | undefined;
}

/**
 * Audits the batch, keeps its outcome on the batch (what `payouts status`, the API and the
 * batch-finished notification show), and with `reportTo` writes the report there.
 */
export async function auditAndRecord(
  options: AuditBatchOptions & { reportTo?: { path: string; format: AuditReportFormat } | undefined },
): Promise<RecordedAudit> {
  const report = await auditBatch(options);
  await options.store.recordLedgerCheck(options.batchId, ledgerCheckOf(report));
  if (!options.reportTo) return { report };
  await mkdir(path.dirname(options.reportTo.path), { recursive: true });
  await writeAuditReport(report, options.reportTo.path, options.reportTo.format);
  return { report, reportPath: options.reportTo.path };
}
