/** Public face of the ledger audit: a batch's rows held against the service's payments (`payouts audit`). */
export {
  AUDIT_REPORT_COLUMNS,
  AUDIT_REPORT_FORMATS,
  type AuditBatchOptions,
  type AuditReport,
  type AuditReportFormat,
  auditAndRecord,
  auditBatch,
  defaultAuditPath,
  ledgerCheckOf,
  type RecordedAudit,
  UnknownAuditBatchError,
  writeAuditReport,
} from "./audit-batch.js";
export {
  type AuditDifference,
  type AuditRow,
  comparePayment,
  DIFFERENCE_KINDS,
  type DifferenceKind,
  ledgerSummary,
  missingPayment,
  paymentWithoutRow,
  rowIsBehind,
} from "./compare.js";
