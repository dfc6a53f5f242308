import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  parseWebhookDelivery,
  signWebhookPayload,
  verifyWebhookSignature,
  WebhookError,
} from "../../../src/webhooks/index.js";

const SECRET = "sk_test_signing_secret";
const body = Buffer.from(
  JSON.stringify({
    event: "api.payment.updated",
    messageId: "msg_1",
    id: "pay_1",
    entityId: "ent_1",
    occurredAt: "2026-01-02T03:04:05.000Z",
  }),
);
// Computed independently of the module under test.
const reference = (secret: string, raw: Buffer) => createHmac("sha256", secret).update(raw).digest("hex");

function codeOf(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof WebhookError ? err.code : "OTHER";
  }
}

describe("verifyWebhookSignature", () => {
  it("accepts the hex HMAC-SHA256 of the raw bytes, in either letter case", () => {
    expect(signWebhookPayload(SECRET, body)).toBe(reference(SECRET, body));
    expect(codeOf(() => verifyWebhookSignature(body, reference(SECRET, body), SECRET))).toBeUndefined();
    expect(
      codeOf(() => verifyWebhookSignature(body, reference(SECRET, body).toUpperCase(), SECRET)),
    ).toBeUndefined();
  });

  it("refuses a missing, empty or malformed signature", () => {
    expect(codeOf(() => verifyWebhookSignature(body, undefined, SECRET))).toBe("SIGNATURE_MISSING");
    expect(codeOf(() => verifyWebhookSignature(body, "  ", SECRET))).toBe("SIGNATURE_MISSING");
    expect(codeOf(() => verifyWebhookSignature(body, "sha256=abc", SECRET))).toBe("SIGNATURE_MALFORMED");
    expect(codeOf(() => verifyWebhookSignature(body, reference(SECRET, body).slice(2), SECRET))).toBe(
      "SIGNATURE_MALFORMED",
    );
  });

  it("refuses a signature made with another secret", () => {
    expect(codeOf(() => verifyWebhookSignature(body, reference("other", body), SECRET))).toBe(
      "SIGNATURE_MISMATCH",
    );
  });

  it("refuses any body changed in one byte after signing", () => {
    const signature = reference(SECRET, body);
    fc.assert(
      fc.property(fc.nat({ max: body.length - 1 }), fc.integer({ min: 1, max: 255 }), (index, flip) => {
        const altered = Buffer.from(body);
        altered[index] = (altered[index] as number) ^ flip;
        expect(codeOf(() => verifyWebhookSignature(altered, signature, SECRET))).toBe("SIGNATURE_MISMATCH");
      }),
    );
  });

  it("accepts a repeated header when one of its values matches", () => {
    expect(
      codeOf(() => verifyWebhookSignature(body, ["0".repeat(64), reference(SECRET, body)], SECRET)),
    ).toBeUndefined();
  });
});

describe("parseWebhookDelivery", () => {
  it("reads a delivery of a known event", () => {
    const parsed = parseWebhookDelivery(body);
    expect(parsed).toMatchObject({ known: true, delivery: { id: "pay_1", messageId: "msg_1" } });
  });

  it("reports an event type it does not know instead of failing, so it can be acknowledged", () => {
    const raw = Buffer.from(JSON.stringify({ event: "api.thing.new", messageId: "msg_2", id: "x" }));
    expect(parseWebhookDelivery(raw)).toEqual({ known: false, event: "api.thing.new", messageId: "msg_2" });
  });

  it("refuses bodies that are not deliveries", () => {
    for (const raw of ["not json", "[]", '{"event":"api.payment.updated"}', '{"messageId":"m"}']) {
      expect(codeOf(() => parseWebhookDelivery(Buffer.from(raw)))).toBe("PAYLOAD_INVALID");
    }
    const noId = Buffer.from(JSON.stringify({ event: "api.payment.updated", messageId: "m" }));
    expect(codeOf(() => parseWebhookDelivery(noId))).toBe("PAYLOAD_INVALID");
  });
});
