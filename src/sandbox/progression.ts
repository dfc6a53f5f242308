/**
 * Moves payments along on a configurable clock: scheduled → in-progress after `toInProgressMs`, then
 * completed or failed after `toFinalMs` more. Amounts ending in 77 are held in `scheduled` (under
 * review); those ending in 13 fail. Fees are recorded when a payment goes in-progress.
 */
import type { PaymentStatus } from "../payouts-api/wire-types.js";
import { finalStatusFor } from "./rules.js";
import type { SandboxState, StoredPayment } from "./state.js";
import { SandboxTimers } from "./timers.js";

export interface ProgressionClock {
  toInProgressMs: number;
  toFinalMs: number;
}

export const DEFAULT_CLOCK: ProgressionClock = { toInProgressMs: 1500, toFinalMs: 3000 };

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
        this.advance(stored, "in-progress", finalStatusFor(stored.outcome));
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
