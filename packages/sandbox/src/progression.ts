/**
 * Moves payments along on a configurable clock: scheduled → in-progress after `toInProgressMs`, then
 * completed or failed after `toFinalMs` more. Amounts ending in 77 are held in `scheduled` (under
 * review); those ending in 13 fail; those ending in 555 complete and are returned `toReturnMs` later
 * (reported `failed`, with a reason). Fees are recorded when a payment goes in-progress.
 *
 * A return is what a bank does days after a payment completed (an ACH return): the service reports
 * the completed payment `failed` (or `canceled`), emits `api.payment.updated`, and its list filters
 * find it under its new status. `returnPayment` is also what `POST /_sandbox/payments/{id}/return` runs.
 */

import { conflict } from "./errors.js";
import { DEFAULT_RETURN_REASON, finalStatusFor } from "./rules.js";
import type { SandboxState, StoredPayment } from "./state.js";
import { SandboxTimers } from "./timers.js";
import type { PaymentFailureReason, PaymentStatus } from "./wire.js";

export interface ProgressionClock {
  toInProgressMs: number;
  toFinalMs: number;
  /** How long after completing a payment with the return trigger amount is returned. */
  toReturnMs: number;
}

export const DEFAULT_CLOCK: ProgressionClock = { toInProgressMs: 1500, toFinalMs: 3000, toReturnMs: 3000 };

/**
 * Returns a completed payment: it is reported `status` (failed or canceled) with `reason` from now on.
 * 409 `PAYMENT_NOT_RETURNABLE` for a payment that is not completed.
 */
export function returnPayment(
  state: SandboxState,
  stored: StoredPayment,
  status: "failed" | "canceled" = "failed",
  reason: PaymentFailureReason = DEFAULT_RETURN_REASON,
): void {
  if (stored.status !== "completed") {
    throw conflict(
      "PAYMENT_NOT_RETURNABLE",
      `payment ${stored.id} is ${stored.status}; only a completed payment can be returned`,
    );
  }
  state.payments.setStatus(stored, status);
  stored.failureReason = { code: reason.code, message: reason.message };
  stored.updatedMs = state.now();
  state.emit("api.payment.updated", {
    id: stored.id,
    entityId: stored.entityId,
    externalId: stored.externalId,
    metadata: stored.metadata,
  });
}

export class PaymentProgression {
  private readonly timers = new SandboxTimers();

  constructor(
    private readonly state: SandboxState,
    private readonly clock: ProgressionClock,
  ) {}

  /** Starts the life cycle of a just-created payment. */
  track(stored: StoredPayment): void {
    if (stored.outcome === "hold") return;
    this.timers.after(this.clock.toInProgressMs, () => {
      if (!this.advance(stored, "scheduled", "in-progress")) return;
      this.timers.after(this.clock.toFinalMs, () => {
        if (!this.advance(stored, "in-progress", finalStatusFor(stored.outcome))) return;
        if (stored.outcome !== "return") return;
        this.timers.after(this.clock.toReturnMs, () => {
          if (!this.timers.closed && stored.status === "completed") returnPayment(this.state, stored);
        });
      });
    });
  }

  /** Applies one transition if the payment is still in `from` (a cancellation may have won the race). */
  private advance(stored: StoredPayment, from: PaymentStatus, to: PaymentStatus): boolean {
    const p = stored;
    if (this.timers.closed || p.status !== from) return false;
    // Going in-progress records the fees: `StoredPayment.toPayment` shows them from then on.
    this.state.payments.setStatus(stored, to);
    p.updatedMs = this.state.now();
    this.state.emit("api.payment.updated", {
      id: p.id,
      entityId: stored.entityId,
      externalId: p.externalId,
      metadata: p.metadata,
    });
    return true;
  }

  close(): void {
    this.timers.close();
  }
}
