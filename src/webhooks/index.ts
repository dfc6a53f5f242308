/** Public face of webhooks: pure verification and parsing of the service's signed deliveries. */
export { CONSUMED_EVENTS, isPaymentEvent } from "./consumed-events.js";
export { isKnownEventType, type ParsedDelivery, parseWebhookDelivery } from "./parse-delivery.js";
export { signWebhookPayload, verifyWebhookSignature } from "./verify-signature.js";
export { WebhookError, type WebhookErrorCode } from "./webhook-error.js";
