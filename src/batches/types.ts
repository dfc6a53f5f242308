/**
 * Glossary of the batch pipeline's records. A **batch** is one submitted sheet; a **row** is one valid
 * line of it (one payment, ever); an **attempt** is one try of a row as the operator sees it (an
 * operator retry starts the next); a **requote generation** is a new Idempotency-Key within an attempt,
 * used only after the service refused a body for good and a look-up showed no payment exists.
 */
import type { PayoutInstruction } from "../intake/payout-instruction.js";
import type { Fee } from "../payouts-api/wire-types.js";
import type { RowState } from "./row-state.js";

export interface BatchRecord {
  /** Letters, digits, `-`, `_`; never digits only and never a `:` (safe in keys, job ids and externalIds). */
  id: string;
  /** sha256 (hex) of the submitted file's bytes. */
  fileSha256: string;
  /**
   * The identity of rows without a reference (`row-identity`'s fileKeyFor): taken from the file's
   * content, so a second batch of the same file cannot pay them again. Absent on older batches.
   */
  fileKey?: string | undefined;
  /** The sheet's file name as submitted (for people; not an identity). */
  sourceName: string;
  /** The entity the batch pays for (`ent_...` or `me`); part of every Idempotency-Key. */
  entityId: string;
  /** ISO time the batch was recorded. */
  createdAt: string;
  /** Valid rows (each one job, when the feed reaches it). */
  rowCount: number;
  /** Rows that failed validation (recorded for the result file, never enqueued). */
  invalidCount: number;
  /** True once every valid row is recorded in Redis. */
  rowsRecorded: boolean;
  /**
   * True once every valid row is recorded and handed to the batch's feed, which hands them to the queue
   * a window at a time (batch-feeder.ts). A false value is finished by a worker or a resubmission.
   */
  enqueueComplete: boolean;
  /** Where the batch's instructions were archived (NDJSON), for recovery. */
  archivePath: string | undefined;
  /** The sheet as submitted: its columns in order and format, for a result file in the same shape. */
  sheet: SheetLayout;
  /** ISO time every valid row was first seen terminal (set once, by the reconcile sweep or worker). */
  finishedAt?: string | undefined;
  /** Who submitted it: a user or token name, or a system identity (`cli:<os user>`, `system:inbox`). */
  submittedBy?: string | undefined;
  /** The outcome of the batch's last check against the service's ledger (`payouts audit`). */
  ledger?: LedgerCheck | undefined;
}

/** What the last ledger check of a batch found, as kept on the batch (src/ledger-audit). */
export interface LedgerCheck {
  /** ISO time the check finished. */
  at: string;
  /** Valid rows held against the ledger. */
  rows: number;
  /** Payments the service holds for the batch. */
  payments: number;
  /** Rows whose payments (or absence of one) agree with the ledger. */
  matched: number;
  differences: number;
  /** Differences by kind (ledger-audit's DIFFERENCE_KINDS). */
  byKind: Record<string, number>;
  /** Rows only behind their payment when checked (handed to the worker to follow); absent: none. */
  behind?: number | undefined;
  /** One line for people: `ledger: 20,000 rows match, 0 differences`. */
  summary: string;
}

/** What a result file needs to look like the sheet it answers. */
export interface SheetLayout {
  /** The sheet's own column headers as written, in order (every column, ours and the user's extra ones). */
  columns: string[];
  /** For each column, the key its values have in `SourceValues` (headers may repeat; keys do not). */
  keys: string[];
  format: "csv" | "xlsx";
  /** The archived copy of the submitted file, when it was archived. */
  archivedSheetPath?: string | undefined;
}

/** An FX quote as stored on the row before the payment that uses it is sent (docs/design.md §3.2). */
export interface StoredFxQuote {
  quoteToken: string;
  expiresAt: string;
  /** Foreign minor units the quote is valid for. */
  foreignAmount: number;
  currency: string;
  /** USD minor units debited before fees. */
  usdAmount: number;
  usdToForeignRate: number;
  /** The requote generation (key) this quote belongs to. */
  generation: number;
}

export interface RowHistoryEntry {
  at: string;
  from: RowState | null;
  to: RowState;
  attempt: number;
  note: string | null;
}

/**
 * The source values of a sheet row for the result file, by column key (`SheetLayout.keys`): the text
 * as shown, or the number of a numeric cell, so amounts stay numbers in the result.
 */
export type SourceValues = Record<string, string | number>;

/**
 * What submitBatch receives per valid row: the instruction, and optionally its original cells. A row
 * read back from an archive that holds an operator's correction also carries the attempt that
 * correction started, so a rebuilt row continues from it.
 */
export type SubmittedInstruction = PayoutInstruction & { source?: SourceValues; attempt?: number };

export interface InvalidRowProblem {
  column?: string | undefined;
  message: string;
}

/** A row that failed validation: kept so the result file can show it as `invalid`. */
export interface InvalidRowInput {
  rowNumber: number;
  source?: SourceValues;
  problems: InvalidRowProblem[];
}

/** Everything the pipeline knows about one row. */
export interface RowRecord {
  batchId: string;
  rowKey: string;
  rowNumber: number;
  instruction: PayoutInstruction;
  source: SourceValues | undefined;
  state: RowState;
  attempt: number;
  requoteGeneration: number;
  paymentId: string | undefined;
  /** The payment's status on the service, as last seen. */
  paymentStatus: string | undefined;
  /** USD minor units debited before fees (FX payments), as the service reported it. */
  debitUsd: number | undefined;
  fxRate: number | undefined;
  /** The payment's fees as the service last reported them (set by reconciliation). */
  fees?: Fee[] | undefined;
  /** The payment's `updatedAt` last applied (normalised ISO): an older snapshot never overwrites it. */
  paymentUpdatedAt?: string | undefined;
  /** The payment's `createdAt` (normalised ISO), where it sits in the service's lists. */
  paymentCreatedAt?: string | undefined;
  quote: StoredFxQuote | undefined;
  /** sha256 of the body last (possibly) sent, and the generation (key) it was sent under. */
  sentBodyHash: string | undefined;
  sentGeneration: number | undefined;
  /** When (ms) a request of this row last passed the send fence: it may have gone out then. */
  lastSentAt?: number | undefined;
  /** Until when (ms) that request may still reach the service: a new attempt waits until then. */
  inDoubtUntil?: number | undefined;
  errorCode: string | undefined;
  errorMessage: string | undefined;
  updatedAt: string;
  history: RowHistoryEntry[];
}

/** What a row's result line shows: the row without its history and its send bookkeeping. */
export type RowOutcome = Pick<
  RowRecord,
  | "batchId"
  | "rowKey"
  | "rowNumber"
  | "instruction"
  | "source"
  | "state"
  | "attempt"
  | "requoteGeneration"
  | "paymentId"
  | "paymentStatus"
  | "debitUsd"
  | "fxRate"
  | "errorCode"
  | "errorMessage"
  | "updatedAt"
>;

/** What reconciliation reads of a row (BatchStore.rowHeads): no static record, no history. */
export type RowHead = Pick<
  RowRecord,
  | "batchId"
  | "rowKey"
  | "state"
  | "attempt"
  | "paymentId"
  | "paymentStatus"
  | "paymentUpdatedAt"
  | "paymentCreatedAt"
>;

/** What an audit holds against the ledger of a row (BatchStore.auditRows): no history. */
export type AuditedRow = Pick<
  RowRecord,
  "rowKey" | "rowNumber" | "instruction" | "state" | "attempt" | "paymentId" | "paymentUpdatedAt"
>;

/** Counts by state and money per currency and state, in minor units of that currency. */
export interface BatchProgress {
  batch: BatchRecord;
  counts: Record<RowState, number>;
  /** `totals[currency][state]` = sum of row amounts (minor units of the currency). */
  totals: Record<string, Partial<Record<RowState, number>>>;
  /** Rows in a terminal state. */
  done: number;
}
