/**
 * Notifications this tool sends to NOTIFY_URL, as Standard Webhooks: `sendNotification` for any event
 * (its type, its data), and the batch-finished summary and handler built on it.
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
export {
  NOTIFY_HEADERS,
  type Notification,
  type NotifyOptions,
  notificationId,
  sendNotification,
  verifyNotification,
} from "./send-notification.js";
