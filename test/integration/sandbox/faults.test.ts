import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ACH_PAYMENT, call, createPayment, expectError, waitFor } from "./helpers.js";

describe("sandbox fault injection", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ clock: { toInProgressMs: 60_000, toFinalMs: 60_000 } });
  });
  afterAll(() => sb.close());
  afterEach(async () => {
    // Reset through the sandbox-only endpoint, which faults never affect.
    const res = await call(sb, "PUT", "/_sandbox/faults", {
      body: {
        errorRate5xx: 0,
        rateLimitRate: 0,
        dropAfterStoreRate: 0,
        failNextRequests: 0,
        rateLimitNextRequests: 0,
        dropNextPaymentResponses: 0,
        latencyMs: 0,
      },
    });
    expect(res.status).toBe(200);
  });

  it("answers the next N requests 503 service_unavailable_error, then recovers", async () => {
    sb.setFaults({ failNextRequests: 2 });
    expectError(await call(sb, "GET", "/accounts"), 503, "service_unavailable_error");
    expectError(await call(sb, "GET", "/payments"), 503, "service_unavailable_error");
    expect((await call(sb, "GET", "/accounts")).status).toBe(200);
  });

  it("answers 503 before doing anything at errorRate5xx 1 (nothing is created)", async () => {
    sb.setFaults({ errorRate5xx: 1 });
    expectError(
      await createPayment(sb, { ...ACH_PAYMENT, metadata: { f: "5xx" } }),
      503,
      "service_unavailable_error",
    );
    sb.setFaults({ errorRate5xx: 0 });
    expect((await call(sb, "GET", "/payments?metadata[f]=5xx")).body.data).toEqual([]);
  });

  it("answers 429 rate_limit_error with Retry-After: 1", async () => {
    sb.setFaults({ rateLimitRate: 1 });
    const res = await call(sb, "GET", "/accounts");
    expectError(res, 429, "rate_limit_error");
    expect(res.headers.get("retry-after")).toBe("1");
    sb.setFaults({ rateLimitRate: 0, rateLimitNextRequests: 1 });
    expectError(await call(sb, "GET", "/accounts"), 429, "rate_limit_error");
    expect((await call(sb, "GET", "/accounts")).status).toBe(200);
  });

  it("drops the response of a stored payment; the retry with the same key replays it", async () => {
    sb.setFaults({ dropNextPaymentResponses: 1 });
    const body = { ...ACH_PAYMENT, metadata: { f: "drop" } };
    await expect(createPayment(sb, body, { idempotencyKey: "drop-key" })).rejects.toThrow();
    const listed = await call(sb, "GET", "/payments?metadata[f]=drop");
    expect(listed.body.data).toHaveLength(1);
    const retry = await createPayment(sb, body, { idempotencyKey: "drop-key" });
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(listed.body.data[0].id);
    expect((await call(sb, "GET", "/payments?metadata[f]=drop")).body.data).toHaveLength(1);
  });

  it("drops at dropAfterStoreRate 1 too, and only for created payments", async () => {
    await call(sb, "PUT", "/_sandbox/faults", { body: { dropAfterStoreRate: 1 } });
    await expect(createPayment(sb, { ...ACH_PAYMENT, metadata: { f: "rate-drop" } })).rejects.toThrow();
    // A rejected payment is answered normally.
    expectError(await createPayment(sb, { ...ACH_PAYMENT, currency: "EUR" }), 400, "invalid_request_error");
    expect((await call(sb, "GET", "/accounts?limit=1")).status).toBe(200);
    expect((await call(sb, "GET", "/payments?metadata[f]=rate-drop")).body.data).toHaveLength(1);
  });

  it("still answers correctly with latency configured", async () => {
    sb.setFaults({ latencyMs: [1, 5] });
    expect((await call(sb, "GET", "/accounts?limit=1")).status).toBe(200);
  });

  it("validates fault options and requires the api key on /_sandbox/faults", async () => {
    expectError(
      await call(sb, "PUT", "/_sandbox/faults", { body: { errorRate5xx: 2 } }),
      400,
      "invalid_request_error",
    );
    expectError(
      await call(sb, "PUT", "/_sandbox/faults", { body: { nonsense: true } }),
      400,
      "invalid_request_error",
    );
    expectError(
      await call(sb, "PUT", "/_sandbox/faults", { key: null, body: {} }),
      401,
      "authentication_error",
    );
    expect(() => sb.setFaults({ rateLimitRate: -1 })).toThrow(RangeError);
    const current = await call(sb, "GET", "/_sandbox/faults");
    expect(current.body.errorRate5xx).toBe(0);
  });
});

describe("sandbox webhook faults", () => {
  it("duplicates deliveries with the same messageId at duplicateWebhookRate 1, and still delivers when shuffled", async () => {
    const received: string[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push(JSON.parse(Buffer.concat(chunks).toString("utf8")).messageId);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const sb = await startSandbox({
      clock: { toInProgressMs: 60_000, toFinalMs: 60_000 },
      faults: { duplicateWebhookRate: 1, shuffleWebhooks: true },
    });
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      await call(sb, "PATCH", "/webhook", { body: { url, events: ["api.payment.created"] } });
      await createPayment(sb, ACH_PAYMENT);
      await createPayment(sb, ACH_PAYMENT);
      await waitFor(() => (received.length >= 4 ? true : undefined));
      const counts = new Map<string, number>();
      for (const id of received) counts.set(id, (counts.get(id) ?? 0) + 1);
      expect([...counts.values()]).toEqual([2, 2]);
    } finally {
      await sb.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
