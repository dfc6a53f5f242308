/**
 * Reading a verified delivery. Only ever called after {@link verifyWebhookSignature} succeeded.
 * An event type we do not know (the service may add some) is still a valid delivery, reported as
 * `known: false`, so the receiver acknowledges it instead of making the service retry it for ever.
 */
import { EVENT_TYPES, type EventType, WebhookDelivery } from "../payouts-api/wire-types.js";
import { WebhookError } from "./webhook-error.js";

export type ParsedDelivery =
  | { known: true; delivery: WebhookDelivery }
  | { known: false; event: string; messageId: string };

export function isKnownEventType(event: string): event is EventType {
  return (EVENT_TYPES as readonly string[]).includes(event);
}

export function parseWebhookDelivery(rawBody: Uint8Array): ParsedDelivery {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(rawBody).toString("utf8"));
  } catch {
    throw new WebhookError("PAYLOAD_INVALID", "the delivery body is not JSON");
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new WebhookError("PAYLOAD_INVALID", "the delivery body is not a JSON object");
  }
  const { event, messageId } = json as { event?: unknown; messageId?: unknown };
  if (typeof messageId !== "string" || messageId.length === 0) {
    throw new WebhookError("PAYLOAD_INVALID", "the delivery has no messageId");
  }
  if (typeof event !== "string") throw new WebhookError("PAYLOAD_INVALID", "the delivery has no event");
  if (!isKnownEventType(event)) return { known: false, event, messageId };
  const parsed = WebhookDelivery.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new WebhookError(
      "PAYLOAD_INVALID",
      `the delivery does not match the spec: ${issue ? `${issue.path.join(".") || "body"}: ${issue.message}` : "invalid"}`,
    );
  }
  return { known: true, delivery: parsed.data };
}
