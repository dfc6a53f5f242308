/**
 * Notifications this tool sends to NOTIFY_URL, as Standard Webhooks: `sendNotification` for any event
 * (its type, its data), and the events built on it (the batch-finished summary, `payout.returned`).
 */
export {
  type ApprovalSummary,
  approvalSummary,
  type BatchFinishedHandlerOptions,
  type BatchFinishedSummary,
  batchFinishedHandler,
  batchFinishedSummary,
  sendBatchFinished,
} from "./batch-finished.js";
export { type BatchPausedHandlerOptions, batchPausedData, batchPausedHandler } from "./batch-paused.js";
export {
  type PayoutReturnedEvent,
  type PayoutReturnedHandlerOptions,
  payoutReturnedEvent,
  payoutReturnedHandler,
  type ReturnedRowInfo,
} from "./payout-returned.js";
export {
  NOTIFY_HEADERS,
  type Notification,
  type NotifyOptions,
  notificationId,
  sendNotification,
  verifyNotification,
} from "./send-notification.js";
