/**
 * Webhook signature verification (spec "Signature"; docs/design.md §3.5). The signature is the hex
 * HMAC-SHA256 of the raw request bytes, keyed with the partner's signing secret. It is computed over
 * the bytes as received (never re-serialised JSON) and compared in constant time, before the body is
 * parsed at all: an unsigned body is never even read as JSON.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { WebhookError } from "./webhook-error.js";

/** Bytes of a SHA-256 digest; its hex form is twice as long. */
const DIGEST_BYTES = 32;
const HEX_DIGEST = /^[0-9a-f]{64}$/i;

/** The signature the service sends for `rawBody`: lowercase hex HMAC-SHA256. */
export function signWebhookPayload(secret: string, rawBody: Uint8Array): string {
  return createHmac("sha256", secret).update(rawBody).digest("hex");
}

/**
 * Throws a {@link WebhookError} unless `signatureHeader` is the signature of `rawBody` under `secret`.
 * The header value may arrive as an array (a repeated header): then any one matching value is enough,
 * each compared in constant time.
 */
export function verifyWebhookSignature(
  rawBody: Uint8Array,
  signatureHeader: string | readonly string[] | undefined,
  secret: string,
): void {
  if (!secret) throw new TypeError("verifyWebhookSignature: the signing secret is empty");
  const candidates = (typeof signatureHeader === "string" ? [signatureHeader] : (signatureHeader ?? []))
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
  if (candidates.length === 0) {
    throw new WebhookError("SIGNATURE_MISSING", "the delivery has no X-Service-Signature header");
  }
  const expected = createHmac("sha256", secret).update(rawBody).digest();
  let wellFormed = false;
  let matched = false;
  for (const candidate of candidates) {
    // Only the length and the hex alphabet are checked before the comparison: both are public.
    if (!HEX_DIGEST.test(candidate)) continue;
    wellFormed = true;
    const given = Buffer.from(candidate, "hex");
    if (given.length === DIGEST_BYTES && timingSafeEqual(given, expected)) matched = true;
  }
  if (matched) return;
  if (!wellFormed) {
    throw new WebhookError("SIGNATURE_MALFORMED", "X-Service-Signature is not a hex HMAC-SHA256 digest");
  }
  throw new WebhookError("SIGNATURE_MISMATCH", "X-Service-Signature does not match the delivery's body");
}
