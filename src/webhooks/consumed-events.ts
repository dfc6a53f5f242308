/** The events this tool subscribes to and what each one means for us. */
import type { EventType } from "../payouts-api/wire-types.js";

/**
 * What `payouts webhook setup` subscribes to by default: payment events drive reconciliation; account
 * and limitation events are acknowledged and logged (intake reads accounts and limitations live for
 * every sheet and caches nothing across sheets, so there is nothing to refresh).
 */
export const CONSUMED_EVENTS: readonly EventType[] = [
  "api.payment.created",
  "api.payment.updated",
  "api.account.created",
  "api.account.updated",
  "api.account.deleted",
  "api.limitation.updated",
];

export function isPaymentEvent(event: string): event is "api.payment.created" | "api.payment.updated" {
  return event === "api.payment.created" || event === "api.payment.updated";
}
