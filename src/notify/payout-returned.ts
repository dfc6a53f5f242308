/**
 * The `payout.returned` notification (NOTIFY_URL): a row whose completed payment the service later
 * reported failed or canceled (a return: the payee was not paid after all). Sent once per returned
 * row, signed like every notification of this tool, with what accounting needs to find the payout:
 * batch, row, reference, amount, payment, when and the service's reason. Never a secret or a bank
 * identifier.
 */
import { randomUUID } from "node:crypto";
import type { BatchStore } from "../batches/index.js";
import type { LogSink } from "../logging/index.js";
import { formatMinor } from "../money/index.js";
import { type NotifyOptions, sendNotification } from "./send-notification.js";

export interface PayoutReturnedEvent {
  event: "payout.returned";
  /** Unique per notification and stable across its retries: receivers dedupe on it. */
  notificationId: string;
  batchId: string;
  sourceName: string;
  rowNumber: number;
  reference: string | null;
  paymentId: string;
  /** `failed` or `canceled`: what the service reports now. */
  paymentStatus: string;
  /** What was returned, in minor units and as text. */
  amount: { minor: number; amount: string; currency: string };
  /** When the service says it happened (the payment's `updatedAt`). */
  returnedAt: string;
  reason: { code: string; message: string } | null;
}

/** What the reconciler reports about a returned row (src/reconcile's ReturnedRow). */
export interface ReturnedRowInfo {
  batchId: string;
  rowKey: string;
  paymentId: string;
  paymentStatus: string;
  returnedAt: string;
  reason?: { code: string; message: string } | undefined;
}

export interface PayoutReturnedHandlerOptions {
  store: BatchStore;
  notify?: NotifyOptions | undefined;
  logger?: LogSink;
}

/** The event for a returned row, from its record. Undefined when the row is gone. */
export async function payoutReturnedEvent(
  store: BatchStore,
  returned: ReturnedRowInfo,
  notificationId: string = randomUUID(),
): Promise<PayoutReturnedEvent | undefined> {
  const [batch, row] = await Promise.all([
    store.getBatch(returned.batchId),
    store.getRow(returned.batchId, returned.rowKey),
  ]);
  if (!batch || !row) return undefined;
  const { amount, currency } = row.instruction;
  return {
    event: "payout.returned",
    notificationId,
    batchId: batch.id,
    sourceName: batch.sourceName,
    rowNumber: row.rowNumber,
    reference: row.instruction.reference ?? null,
    paymentId: returned.paymentId,
    paymentStatus: returned.paymentStatus,
    amount: { minor: amount, amount: formatMinor(amount, currency), currency },
    returnedAt: returned.returnedAt,
    reason: returned.reason ?? null,
  };
}

/** Logs every returned row and, with NOTIFY_URL, sends its `payout.returned` event. Never throws. */
export function payoutReturnedHandler(
  options: PayoutReturnedHandlerOptions,
): (returned: ReturnedRowInfo) => Promise<void> {
  return async (returned) => {
    try {
      options.logger?.warn(
        { batchId: returned.batchId, paymentId: returned.paymentId, returnedAt: returned.returnedAt },
        `payout returned: its completed payment is now reported ${returned.paymentStatus}`,
      );
      if (!options.notify) return;
      const event = await payoutReturnedEvent(options.store, returned);
      if (!event) return;
      const status = await sendNotification(
        { type: event.event, data: event, id: event.notificationId },
        options.notify,
      );
      if (status < 200 || status >= 300)
        options.logger?.warn(
          { batchId: returned.batchId, status },
          "payout.returned notification was not accepted",
        );
    } catch (err) {
      options.logger?.warn({ batchId: returned.batchId, err }, "payout.returned notification failed");
    }
  };
}
