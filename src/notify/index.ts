/** Notifications this tool sends to NOTIFY_URL, signed: the batch-finished summary, `payout.returned`. */
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
export {
  type PayoutReturnedEvent,
  type PayoutReturnedHandlerOptions,
  payoutReturnedEvent,
  payoutReturnedHandler,
  type ReturnedRowInfo,
} from "./payout-returned.js";
