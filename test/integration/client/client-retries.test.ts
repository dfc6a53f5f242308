import { Writable } from "node:stream";
import { inspect } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../../../src/logging/index.js";
import {
  type AttemptInfo,
  createPayoutsClient,
  type PaymentCreate,
  PayoutsApiConnectionError,
  PayoutsApiError,
  PayoutsApiInvalidRequestError,
  type PayoutsClient,
  type PayoutsClientOptions,
} from "../../../src/payouts-api/index.js";
import {
  type FakePeer,
  type PeerHandler,
  paymentBody,
  sendError,
  sendJson,
  startFakePeer,
} from "./fake-peer.js";

const API_KEY = "sk_test_super_secret_key_123456";
const KEY = "5b7e0c1e-3f1a-4c55-9e2f-0a4b8f3d6c21";

const PAYMENT: PaymentCreate = {
  amount: 1250,
  originatingAccountId: "acct_int1",
  receivingAccountId: "acct_ext1",
  deliveryPreference: "standard-ach",
  externalId: "INV-1",
  metadata: { batch: "b1", row: "2", note: "naïve € payee" },
};

let peer: FakePeer | undefined;
let client: PayoutsClient | undefined;

afterEach(async () => {
  await client?.close();
  await peer?.close();
  client = undefined;
  peer = undefined;
});

async function setup(handler: PeerHandler, options: Partial<PayoutsClientOptions> = {}) {
  peer = await startFakePeer(handler);
  const attempts: AttemptInfo[] = [];
  client = createPayoutsClient({
    baseUrl: peer.baseUrl,
    apiKey: API_KEY,
    entityId: "me",
    timeoutMs: 2_000,
    retry: { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 20 },
    hooks: { onResponse: (info) => attempts.push(info) },
    ...options,
  });
  return { peer, client, attempts };
}

describe("payouts client retries against a real HTTP peer", () => {
  it("retries 503s and succeeds with the same Idempotency-Key and byte-identical body", async () => {
    const { peer, client } = await setup((_req, res, i) => {
      if (i < 2) sendError(res, 503, "service_unavailable_error", "SERVICE_UNAVAILABLE");
      else sendJson(res, 201, paymentBody("pay_1", { externalId: "INV-1" }));
    });

    const payment = await client.payments.create(PAYMENT, { idempotencyKey: KEY });

    expect(payment.id).toBe("pay_1");
    expect(peer.requests).toHaveLength(3);
    const [first, ...rest] = peer.requests;
    for (const req of peer.requests) {
      expect(req.method).toBe("POST");
      expect(req.url).toBe("/v2/payments");
      expect(req.headers["idempotency-key"]).toBe(KEY);
      expect(req.headers["api-key"]).toBe(API_KEY);
      expect(req.headers["service-entity-id"]).toBe("me");
      expect(req.headers["content-type"]).toBe("application/json");
    }
    for (const req of rest) expect(req.body.equals(first!.body)).toBe(true);
    expect(JSON.parse(first!.body.toString("utf8"))).toEqual(PAYMENT);
  });

  it("honours Retry-After on 429 instead of its own backoff", async () => {
    const { peer, client, attempts } = await setup(
      (_req, res, i) => {
        if (i === 0)
          sendError(res, 429, "rate_limit_error", "RATE_LIMITED", "slow down", { "retry-after": "0" });
        else sendJson(res, 200, paymentBody("pay_2"));
      },
      // With this random source the jittered backoff would be 39 ms; Retry-After says 0.
      { random: () => 0.99, retry: { maxAttempts: 3, baseDelayMs: 40, maxDelayMs: 40 } },
    );

    await expect(client.payments.get("pay_2")).resolves.toMatchObject({ id: "pay_2" });
    expect(peer.requests).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ attempt: 1, status: 429, errorCode: "RATE_LIMITED", retryInMs: 0 });
    expect(attempts[1]).toMatchObject({ attempt: 2, status: 200 });
  });

  it("gives a 429 back to the caller when Retry-After is longer than it will wait", async () => {
    const { peer, client } = await setup((_req, res) =>
      sendError(res, 429, "rate_limit_error", "RATE_LIMITED", "slow down", { "retry-after": "3600" }),
    );

    const err = await client.payments.get("pay_3").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PayoutsApiError);
    expect(err).toMatchObject({ status: 429, type: "rate_limit_error", retryAfterMs: 3_600_000 });
    expect(peer.requests).toHaveLength(1);
  });

  it("retries a request the server never answers, then fails with a timeout connection error", async () => {
    const { peer, client } = await setup(() => {}, {
      timeoutMs: 150,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    });

    const err = await client.payments.create(PAYMENT, { idempotencyKey: KEY }).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(PayoutsApiConnectionError);
    expect(err).toMatchObject({ status: 0, type: "connection_error", timedOut: true });
    expect(peer.requests).toHaveLength(2);
    expect(peer.requests.map((r) => r.headers["idempotency-key"])).toEqual([KEY, KEY]);
  });

  it("retries after the connection is reset in the middle of a response", async () => {
    const { peer, client } = await setup((_req, res, i) => {
      if (i === 0) {
        res.writeHead(201, { "content-type": "application/json", "content-length": "500" });
        res.write('{"id":"pay_4","sta');
        // Give the partial body time to leave before the socket is torn down.
        setImmediate(() => res.socket?.destroy());
      } else {
        sendJson(res, 201, paymentBody("pay_4"));
      }
    });

    await expect(client.payments.create(PAYMENT, { idempotencyKey: KEY })).resolves.toMatchObject({
      id: "pay_4",
    });
    expect(peer.requests).toHaveLength(2);
    expect(peer.requests.map((r) => r.headers["idempotency-key"])).toEqual([KEY, KEY]);
    expect(peer.requests[1]!.body.equals(peer.requests[0]!.body)).toBe(true);
  });

  it("reports a transport error code once every try was reset", async () => {
    const { peer, client } = await setup((_req, res) => res.socket?.destroy(), {
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 },
    });

    const err = await client.accounts.get("acct_1").catch((e: unknown) => e);

    expect(err).toBeInstanceOf(PayoutsApiConnectionError);
    expect((err as PayoutsApiConnectionError).transient).toBe(true);
    expect((err as PayoutsApiConnectionError).timedOut).toBe(false);
    expect(peer.requests).toHaveLength(3);
  });

  it("retries ECONNREFUSED and then reports it", async () => {
    const closed = await startFakePeer(() => {});
    const baseUrl = closed.baseUrl;
    await closed.close();
    const attempts: AttemptInfo[] = [];
    client = createPayoutsClient({
      entityId: "me",
      baseUrl,
      apiKey: API_KEY,
      retry: { maxAttempts: 2, baseDelayMs: 1 },
      hooks: { onResponse: (info) => attempts.push(info) },
    });

    const err = await client.limitations.get().catch((e: unknown) => e);

    expect(err).toBeInstanceOf(PayoutsApiConnectionError);
    expect(err).toMatchObject({ code: "ECONNREFUSED", status: 0 });
    expect(attempts.map((a) => [a.attempt, a.status, a.errorCode])).toEqual([
      [1, 0, "ECONNREFUSED"],
      [2, 0, "ECONNREFUSED"],
    ]);
  });

  it("does not retry a 400 and exposes its code and details", async () => {
    const { peer, client } = await setup((_req, res) =>
      sendJson(res, 400, {
        error: {
          type: "invalid_request_error",
          code: "VALIDATION_ERROR",
          message: "amount must be positive",
          details: { field: "amount" },
        },
      }),
    );

    const err = await client.payments.create(PAYMENT, { idempotencyKey: KEY }).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(PayoutsApiInvalidRequestError);
    expect(err).toMatchObject({
      status: 400,
      code: "VALIDATION_ERROR",
      message: "amount must be positive",
      details: { field: "amount" },
    });
    expect(peer.requests).toHaveLength(1);
  });

  it("retries 409 IDEMPOTENCY_KEY_IN_PROGRESS but not 409 DUPLICATE_EXTERNAL_ID", async () => {
    const { peer, client } = await setup((_req, res, i) => {
      if (i === 0) sendError(res, 409, "conflict_error", "IDEMPOTENCY_KEY_IN_PROGRESS");
      else if (i === 1) sendJson(res, 201, paymentBody("pay_5"));
      else sendError(res, 409, "conflict_error", "DUPLICATE_EXTERNAL_ID");
    });

    await expect(client.payments.create(PAYMENT, { idempotencyKey: KEY })).resolves.toMatchObject({
      id: "pay_5",
    });
    expect(peer.requests).toHaveLength(2);

    const other = "0c0a1b2c-0000-4000-8000-000000000001";
    await expect(client.payments.create(PAYMENT, { idempotencyKey: other })).rejects.toMatchObject({
      status: 409,
      code: "DUPLICATE_EXTERNAL_ID",
    });
    expect(peer.requests).toHaveLength(3);
  });

  it("refuses to create a payment without an idempotency key", async () => {
    const { peer, client } = await setup((_req, res) => sendJson(res, 201, paymentBody("pay_x")));
    const create = client.payments.create as (b: PaymentCreate, o: object) => Promise<unknown>;
    await expect(create(PAYMENT, {})).rejects.toThrow(/idempotencyKey/);
    expect(peer.requests).toHaveLength(0);
  });

  it("turns a 2xx body that breaks the wire types into INVALID_RESPONSE without retrying", async () => {
    const { peer, client } = await setup((_req, res) =>
      sendJson(res, 200, {
        id: "pay_6",
        status: "teleported",
        bankAccount: { accountNumber: "000123456789" },
      }),
    );

    const err = await client.payments.get("pay_6").catch((e: unknown) => e);

    expect(err).toBeInstanceOf(PayoutsApiError);
    expect(err).toMatchObject({ status: 200, type: "internal_error", code: "INVALID_RESPONSE" });
    expect(JSON.stringify(err)).not.toContain("000123456789");
    expect(peer.requests).toHaveLength(1);
  });

  it("never puts the API key in errors or debug logs, even when the server echoes it", async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString("utf8"));
        done();
      },
    });
    const logger = createLogger({ level: "debug", name: "test", destination });
    const { client } = await setup(
      (_req, res) =>
        sendJson(res, 401, {
          error: {
            type: "authentication_error",
            code: "UNAUTHORIZED",
            message: `key ${API_KEY} not recognized`,
            details: { given: API_KEY },
          },
        }),
      { logger },
    );

    const err = await client.accounts.list().catch((e: unknown) => e);

    expect(err).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    const e = err as PayoutsApiError;
    expect(e.message).toContain("[REDACTED]");
    for (const text of [e.message, e.stack ?? "", JSON.stringify(e), inspect(e, { depth: 10 }), String(e)]) {
      expect(text).not.toContain(API_KEY);
    }
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join("")).toContain('"path":"/accounts"');
    expect(lines.join("")).not.toContain(API_KEY);
  });

  it("serializes list filters into the query string", async () => {
    const { peer, client } = await setup((_req, res) => sendJson(res, 200, { data: [], hasMore: false }));

    await client.payments.list({
      limit: 10,
      status: "completed",
      createdGte: "2026-01-01T00:00:00Z",
      metadata: { batch: "b 1&x" },
    });

    expect(peer.requests[0]!.url).toBe(
      "/v2/payments?limit=10&status=completed&created[gte]=2026-01-01T00%3A00%3A00Z&metadata[batch]=b%201%26x",
    );
    const parsed = new URL(peer.requests[0]!.url, "http://x").searchParams;
    expect(parsed.get("metadata[batch]")).toBe("b 1&x");
  });

  it("listAll follows startingAfter until hasMore is false, keeping the filters", async () => {
    const ids = ["pay_e", "pay_d", "pay_c", "pay_b", "pay_a"];
    const { peer, client } = await setup((req, res) => {
      const q = new URL(req.url, "http://x").searchParams;
      const after = q.get("startingAfter");
      const start = after ? ids.indexOf(after) + 1 : 0;
      const page = ids.slice(start, start + 2);
      sendJson(res, 200, { data: page.map((id) => paymentBody(id)), hasMore: start + 2 < ids.length });
    });

    const seen: string[] = [];
    for await (const p of client.payments.listAll({ limit: 2, metadata: { batch: "b1" } })) seen.push(p.id);

    expect(seen).toEqual(ids);
    const queries = peer.requests.map((r) => new URL(r.url, "http://x").searchParams);
    expect(queries.map((q) => q.get("startingAfter"))).toEqual([null, "pay_d", "pay_b"]);
    for (const q of queries) expect(q.get("metadata[batch]")).toBe("b1");
  });

  it("sends no entity header on partner-level endpoints and generates keys for account creates", async () => {
    const { peer, client } = await setup((req, res) => {
      if (req.url.endsWith("/webhook/events")) sendJson(res, 200, { data: ["api.payment.updated"] });
      else
        sendJson(res, 201, {
          id: "acct_new",
          ownershipType: "external",
          type: "ach",
          createdAt: "2026-01-01T00:00:00Z",
          updatedAt: "2026-01-01T00:00:00Z",
        });
    });

    await expect(client.webhook.eventTypes()).resolves.toEqual(["api.payment.updated"]);
    await client.accounts.create({ ownershipType: "external", type: "ach" });

    expect(peer.requests[0]!.headers["service-entity-id"]).toBeUndefined();
    expect(peer.requests[1]!.headers["service-entity-id"]).toBe("me");
    expect(peer.requests[1]!.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("rejects calls after close() with CLIENT_CLOSED", async () => {
    const { client } = await setup((_req, res) => sendJson(res, 200, { capabilities: [] }));
    await expect(client.limitations.get()).resolves.toEqual({ capabilities: [] });
    await client.close();
    await expect(client.limitations.get()).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
  });
});

describe("payouts client cancellation", () => {
  it("stops retrying when the caller's signal aborts, with code ABORTED", async () => {
    const controller = new AbortController();
    const { peer, client } = await setup(
      (_req, res) => {
        sendError(res, 503, "service_unavailable_error", "SERVICE_UNAVAILABLE");
        controller.abort();
      },
      { retry: { maxAttempts: 5, baseDelayMs: 5_000, maxDelayMs: 5_000 }, random: () => 0.5 },
    );

    const err = await client.payments.get("pay_7", { signal: controller.signal }).catch((e: unknown) => e);

    expect(err).toMatchObject({ status: 0, code: "ABORTED" });
    expect(peer.requests).toHaveLength(1);
  });

  it("ends a call still waiting for its answer when the client closes, with CLIENT_CLOSED", async () => {
    // The peer never answers and the time-out is far beyond the test's: only close() can end the call.
    const { peer, client } = await setup(() => {}, { timeoutMs: 600_000 });
    const pending = client.payments.get("pay_8").catch((e: unknown) => e);
    await vi.waitFor(() => expect(peer.requests).toHaveLength(1));

    await client.close();

    expect(await pending).toMatchObject({ status: 0, code: "CLIENT_CLOSED" });
    expect(peer.requests).toHaveLength(1);
  });
});
