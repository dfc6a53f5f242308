/** Sheet intake: reading a payout sheet and validating every row against the live accounts. */

export { type AttachmentVerdict, checkAttachmentFile, readAttachmentFile } from "./attachment-file.js";
export { checkHeader, checkRow, REFERENCE_MAX, REQUIRED_COLUMNS, type RowCheck } from "./check-row.js";
export {
  checkControlTotals,
  type DeclaredTotals,
  declaredTotalsOf,
  parseDeclaredTotal,
  readTotalRow,
  totalRowLabel,
} from "./control-totals.js";
export { buildLiveContext, fetchLiveContext, type LiveContext, type LiveDataSource } from "./live-context.js";
export { normalizeDeliveryPreference, type Route, resolveRoute } from "./payment-route.js";
export { type PayoutInstruction, RESERVED_METADATA_KEYS, rowKeyOf } from "./payout-instruction.js";
export { PROBLEM_CODES, type Problem, type ProblemCode } from "./problems.js";
export { defaultReportPath, REPORT_COLUMNS, summaryLines, writeValidationReport } from "./report.js";
export {
  eligibilityProblem,
  type IntakeApi,
  type SheetValidation,
  summarizeValidation,
  summaryOf,
  type ValidatedRow,
  type ValidateOptions,
  type ValidationSummary,
  validateSheet,
} from "./validate-sheet.js";
