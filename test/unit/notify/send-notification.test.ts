import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  NOTIFY_HEADERS,
  notificationBody,
  notificationHeaders,
  notificationId,
  verifyNotification,
} from "../../../src/notify/send-notification.js";

const SECRET = "the PAYOUTS_WEBHOOK_SECRET";

describe("a notification as a Standard Webhook", () => {
  const id = notificationId();
  const body = notificationBody(
    { type: "batch.finished", data: { batchId: "b1" } },
    new Date("2026-01-02T03:04:05Z"),
  );

  it("has the standard body: type, timestamp, data", () => {
    expect(JSON.parse(body.toString())).toEqual({
      type: "batch.finished",
      timestamp: "2026-01-02T03:04:05.000Z",
      data: { batchId: "b1" },
    });
  });

  it("verifies with any Standard Webhooks receiver given the secret as whsec_<base64 of its bytes>", () => {
    const headers = notificationHeaders(id, body, SECRET);
    const receiver = new Webhook(`whsec_${Buffer.from(SECRET).toString("base64")}`);
    expect(receiver.verify(body, headers)).toMatchObject({ type: "batch.finished" });
    expect(verifyNotification(body, headers, SECRET).data).toEqual({ batchId: "b1" });
  });

  it("is refused with another secret, with a changed body, and when replayed long after it was sent", () => {
    const headers = notificationHeaders(id, body, SECRET);
    expect(() => verifyNotification(body, headers, "another secret")).toThrow();
    expect(() =>
      verifyNotification(Buffer.from(body.toString().replace("b1", "b2")), headers, SECRET),
    ).toThrow();
    const anHourAgo = notificationHeaders(id, body, SECRET, new Date(Date.now() - 3_600_000));
    expect(anHourAgo[NOTIFY_HEADERS.signature]).toMatch(/^v1,/);
    expect(() => verifyNotification(body, anHourAgo, SECRET)).toThrow(/timestamp/i);
  });
});
