/** The one error type of webhook verification and parsing; `code` says which check failed. */
import { PayoutsError } from "../errors/index.js";
export type WebhookErrorCode =
  /** No `X-Service-Signature` header. */
  | "SIGNATURE_MISSING"
  /** The header is not one hex-encoded SHA-256 digest. */
  | "SIGNATURE_MALFORMED"
  /** The header does not match the body: forged, altered in transit, or signed with another secret. */
  | "SIGNATURE_MISMATCH"
  /** Signed correctly but not a delivery we can read (not JSON, or missing `messageId`/`event`/`id`). */
  | "PAYLOAD_INVALID";

export class WebhookError extends PayoutsError {
  override readonly name = "WebhookError";
  constructor(
    override readonly code: WebhookErrorCode,
    message: string,
  ) {
    super(code, message, { kind: code === "PAYLOAD_INVALID" ? "invalid-input" : "unauthenticated" });
  }

  /** True for the codes that mean "not from the service": answer 401 and do nothing else. */
  get isSignatureFailure(): boolean {
    return this.code !== "PAYLOAD_INVALID";
  }
}
