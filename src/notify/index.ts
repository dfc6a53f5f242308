/** Notifications this tool sends: the signed batch-finished summary to NOTIFY_URL. */
export {
  type ApprovalSummary,
  approvalSummary,
  type BatchFinishedHandlerOptions,
  type BatchFinishedSummary,
  batchFinishedHandler,
  batchFinishedSummary,
  NOTIFY_ID_HEADER,
  NOTIFY_SIGNATURE_HEADER,
  type NotifyOptions,
  sendBatchFinished,
} from "./batch-finished.js";
