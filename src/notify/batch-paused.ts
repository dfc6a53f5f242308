/**
 * `batch.paused`: the circuit breaker paused a batch (src/batch-control/breaker.ts). The operator must
 * look, then resume or cancel it; until then none of its rows is sent. Logged at error (a batch stands
 * still until someone acts), kept in the audit trail, and sent to NOTIFY_URL.
 */
import type { AuditTrail } from "../audit/index.js";
import type { BatchPausedEvent } from "../batch-control/index.js";
import type { LogSink } from "../logging/index.js";
import { type NotifyOptions, sendNotification } from "./send-notification.js";

export interface BatchPausedHandlerOptions {
  notify: NotifyOptions | undefined;
  audit: AuditTrail | undefined;
  logger: LogSink;
}

/** What `batch.paused` carries. */
export function batchPausedData(event: BatchPausedEvent) {
  return {
    batchId: event.batchId,
    pausedBy: event.by,
    pausedAt: event.at,
    reason: event.reason,
    code: event.counts.code || null,
    nextStep: `look at the batch's refused rows, then resume it (payouts resume ${event.batchId}) or cancel it (payouts cancel ${event.batchId})`,
  };
}

export function batchPausedHandler(options: BatchPausedHandlerOptions) {
  return async (event: BatchPausedEvent): Promise<void> => {
    const data = batchPausedData(event);
    options.logger.error(data, "circuit breaker: batch paused; nothing more of it is sent until resumed");
    await options.audit
      ?.record({
        actor: { kind: "system", name: event.by },
        action: "batch.pause",
        target: event.batchId,
        from: "worker",
        outcome: "ok",
        detail: { reason: event.reason, code: data.code },
      })
      .catch((err: unknown) =>
        options.logger.warn({ err: (err as Error).message }, "could not record the pause in the audit trail"),
      );
    if (!options.notify) return;
    await sendNotification({ type: "batch.paused", data }, options.notify).catch((err: unknown) =>
      options.logger.warn(
        { batchId: event.batchId, err: (err as Error).message },
        "batch.paused not delivered",
      ),
    );
  };
}
