import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACH_PAYMENT, call, createPayment, expectError, waitFor } from "./helpers.js";

const EUR_QUOTE = { receivingAccountId: "acct_supplier_eur", currency: "EUR", amount: 10_000 };

describe("sandbox stats (GET/DELETE /_sandbox/stats)", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ clock: { toInProgressMs: 60_000, toFinalMs: 60_000 } });
  });
  afterAll(() => sb.close());

  it("counts API requests by kind and the 429s answered; DELETE starts the counters again", async () => {
    expect((await call(sb, "DELETE", "/_sandbox/stats")).status).toBe(200);
    const created = await createPayment(sb, ACH_PAYMENT);
    await createPayment(sb, ACH_PAYMENT);
    await call(sb, "GET", `/payments/${created.body.id}`);
    await call(sb, "GET", "/payments?limit=1");
    expect((await call(sb, "POST", "/tools/fx-quote", { body: EUR_QUOTE })).status).toBe(200);
    await call(sb, "GET", "/accounts?limit=1");
    sb.setFaults({ rateLimitNextRequests: 1 });
    expectError(await call(sb, "GET", "/payments"), 429, "rate_limit_error");

    const stats = await call(sb, "GET", "/_sandbox/stats");
    expect(stats.status).toBe(200);
    // Control requests (/_sandbox/*) are never counted.
    expect(stats.body.requests).toMatchObject({
      create: 2,
      get: 1,
      list: 2,
      quote: 1,
      other: 1,
      total: 7,
      rateLimited: 1,
    });
    expect(sb.stats().requests.total).toBe(7);

    const reset = await call(sb, "DELETE", "/_sandbox/stats");
    expect(reset.body.requests).toMatchObject({ create: 0, get: 0, list: 0, quote: 0, other: 0, total: 0 });
    expect(reset.body.requests.rateLimited).toBe(0);
    sb.resetStats();
    expect(sb.stats().requests.total).toBe(0);
  });

  it("reports how many payments are stored", async () => {
    const before = (await call(sb, "GET", "/_sandbox/stats")).body.payments.stored;
    await createPayment(sb, ACH_PAYMENT);
    // A refused payment is not stored.
    await createPayment(sb, { ...ACH_PAYMENT, currency: "EUR" });
    const after = await call(sb, "GET", "/_sandbox/stats");
    expect(after.body.payments.stored).toBe(before + 1);
    expect(sb.stats().payments.stored).toBe(sb.state.payments.size);
  });

  it("lists every Idempotency-Key ever seen with two different requests, even those answered 422", async () => {
    const evidence = () => sb.stats().idempotency;
    expect(evidence()).toEqual({ keysReusedWithDifferentRequest: 0, reusedKeys: [] });
    // The same key and body again is a replay, not a reuse.
    await createPayment(sb, ACH_PAYMENT, { idempotencyKey: "same-body" });
    expect((await createPayment(sb, ACH_PAYMENT, { idempotencyKey: "same-body" })).status).toBe(201);
    expect(evidence().keysReusedWithDifferentRequest).toBe(0);

    await createPayment(sb, ACH_PAYMENT, { idempotencyKey: "two-bodies" });
    const other = await createPayment(sb, { ...ACH_PAYMENT, amount: 1 }, { idempotencyKey: "two-bodies" });
    expectError(other, 422, "invalid_request_error", "IDEMPOTENCY_KEY_REUSED");
    await createPayment(sb, { ...ACH_PAYMENT, amount: 2 }, { idempotencyKey: "two-bodies" });
    expect(evidence()).toEqual({ keysReusedWithDifferentRequest: 1, reusedKeys: ["two-bodies"] });

    // Resetting the request counters keeps the evidence.
    await call(sb, "DELETE", "/_sandbox/stats");
    const stats = await call(sb, "GET", "/_sandbox/stats");
    expect(stats.body.idempotency).toEqual({ keysReusedWithDifferentRequest: 1, reusedKeys: ["two-bodies"] });
  });

  it("reports the webhook deliveries under way and those waiting for a connection (an endpoint behind)", async () => {
    // An endpoint that holds every delivery until told to answer: the sandbox's 32 connections fill up.
    const held: ServerResponse<IncomingMessage>[] = [];
    const endpoint = createServer((req, res) => {
      req.resume();
      req.on("end", () => held.push(res));
    });
    await new Promise<void>((r) => endpoint.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hooks`;
      expect(
        (await call(sb, "PATCH", "/webhook", { body: { url, events: ["api.payment.created"] } })).status,
      ).toBe(200);
      for (let i = 0; i < 40; i++) await createPayment(sb, ACH_PAYMENT);
      await waitFor(() => held.length === 32 || undefined);
      const behind = await call(sb, "GET", "/_sandbox/stats");
      expect(behind.body.webhooks).toEqual({ sending: 32, waiting: 8 });
      // Answered, the waiting ones are sent, and nothing is left.
      const answerAll = () => {
        for (const res of held.splice(0)) res.writeHead(200).end();
      };
      answerAll();
      await waitFor(() => {
        answerAll();
        const w = sb.stats().webhooks;
        return w.sending === 0 && w.waiting === 0 ? w : undefined;
      });
    } finally {
      await call(sb, "DELETE", "/webhook");
      endpoint.closeAllConnections();
      await new Promise((r) => endpoint.close(r));
    }
  });

  it("needs the api key and answers 405 to other methods", async () => {
    expectError(await call(sb, "GET", "/_sandbox/stats", { key: null }), 401, "authentication_error");
    expectError(await call(sb, "POST", "/_sandbox/stats", { body: {} }), 405, "invalid_request_error");
  });
});

describe("sandbox rateLimitPerSecond fault", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ clock: { toInProgressMs: 60_000, toFinalMs: 60_000 } });
  });
  afterAll(() => sb.close());

  it("holds all requests to the rate with 429 and Retry-After, then lets them through again", async () => {
    const set = await call(sb, "PUT", "/_sandbox/faults", { body: { rateLimitPerSecond: 2 } });
    expect(set.body.rateLimitPerSecond).toBe(2);
    sb.resetStats();
    const started = Date.now();
    const statuses: number[] = [];
    const retryAfters: (string | null)[] = [];
    for (let i = 0; i < 12; i++) {
      // Every kind of request counts against the one bucket.
      const res =
        i % 2 === 0 ? await call(sb, "GET", "/accounts?limit=1") : await createPayment(sb, ACH_PAYMENT);
      statuses.push(res.status);
      if (res.status === 429) {
        expectError(res, 429, "rate_limit_error", "RATE_LIMITED");
        retryAfters.push(res.headers.get("retry-after"));
      }
    }
    const elapsedS = (Date.now() - started) / 1000;
    const passed = statuses.filter((s) => s !== 429).length;
    // A full bucket (one second of tokens) and what refilled meanwhile, no more.
    expect(passed).toBeGreaterThanOrEqual(2);
    expect(passed).toBeLessThanOrEqual(2 + Math.ceil(elapsedS * 2));
    expect(retryAfters.length).toBe(12 - passed);
    for (const r of retryAfters) expect(Number(r)).toBeGreaterThanOrEqual(1);
    expect(sb.stats().requests.rateLimited).toBe(12 - passed);

    // Waiting what Retry-After says gives a token back.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await call(sb, "GET", "/accounts?limit=1")).status).toBe(200);

    // Control requests are never limited, and 0 lifts the limit.
    for (let i = 0; i < 5; i++) expect((await call(sb, "GET", "/_sandbox/faults")).status).toBe(200);
    sb.setFaults({ rateLimitPerSecond: 0 });
    for (let i = 0; i < 5; i++) expect((await call(sb, "GET", "/accounts?limit=1")).status).toBe(200);
  });

  it("validates the rate", async () => {
    expectError(
      await call(sb, "PUT", "/_sandbox/faults", { body: { rateLimitPerSecond: -1 } }),
      400,
      "invalid_request_error",
    );
    expect(() => sb.setFaults({ rateLimitPerSecond: Number.NaN })).toThrow(RangeError);
  });
});
