/** The events this tool subscribes to and what each one means for us. */
import type { EventType } from "../payouts-api/wire-types.js";

/**
 * What `payouts webhook setup` subscribes to by default: `api.payment.updated` drives reconciliation;
 * account and limitation events are acknowledged and logged (intake reads accounts and limitations
 * live for every sheet and caches nothing across sheets, so there is nothing to refresh).
 *
 * `api.payment.created` is left out: it tells us nothing the payment's own creation answer has not
 * (and a lost answer is found by the worker's look-up and the sweep), yet it is a third of the
 * deliveries a payment brings, each signed, sent, verified and deduplicated. An operator who
 * subscribes to it anyway (`--events`) gets it handled like an update.
 */
export const CONSUMED_EVENTS: readonly EventType[] = [
  "api.payment.updated",
  "api.account.created",
  "api.account.updated",
  "api.account.deleted",
  "api.limitation.updated",
];

export function isPaymentEvent(event: string): event is "api.payment.created" | "api.payment.updated" {
  return event === "api.payment.created" || event === "api.payment.updated";
}
