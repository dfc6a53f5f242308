import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACH_PAYMENT, call, expectError, waitFor } from "./helpers.js";

const post = (sb: RunningSandbox, key: string, body: unknown, entity?: string) =>
  call(sb, "POST", "/payments", { idempotencyKey: key, body, ...(entity ? { entity } : {}) });

describe("sandbox idempotency", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ clock: { toInProgressMs: 60_000, toFinalMs: 60_000 } });
  });
  afterAll(() => sb.close());

  it("replays the first response for the same key and body, creating one payment", async () => {
    const body = { ...ACH_PAYMENT, metadata: { test: "replay" } };
    const first = await post(sb, "key-replay", body);
    // Same body with keys in another order and the entity given explicitly instead of `me`.
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const second = await post(sb, "key-replay", reordered, sb.entityId);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    const list = await call(sb, "GET", "/payments?metadata[test]=replay");
    expect(list.body.data).toHaveLength(1);
  });

  it("replays 4xx responses too", async () => {
    const body = { ...ACH_PAYMENT, originatingAccountId: "acct_payroll_unverified" };
    const first = await post(sb, "key-4xx", body);
    expectError(first, 400, "invalid_request_error", "ACCOUNT_NOT_VERIFIED");
    const again = await post(sb, "key-4xx", body);
    expect(again.status).toBe(400);
    expect(again.body).toEqual(first.body);
  });

  it("answers 422 IDEMPOTENCY_KEY_REUSED for the same key with a different body", async () => {
    await post(sb, "key-reused", ACH_PAYMENT);
    const other = await post(sb, "key-reused", { ...ACH_PAYMENT, amount: 1 });
    expectError(other, 422, "invalid_request_error", "IDEMPOTENCY_KEY_REUSED");
  });

  it("keeps keys per partner but scoped to the entity in the fingerprint", async () => {
    // A different entity under the same key is a different request.
    const created = await call(sb, "POST", "/entities", { body: { name: "Other", businessType: "llc" } });
    const first = await post(sb, "key-entity", ACH_PAYMENT, sb.entityId);
    const other = await post(sb, "key-entity", ACH_PAYMENT, created.body.id);
    expect(first.status).toBe(201);
    expectError(other, 422, "invalid_request_error", "IDEMPOTENCY_KEY_REUSED");
    await call(sb, "DELETE", `/entities/${created.body.id}`);
  });

  it("answers 409 IDEMPOTENCY_KEY_IN_PROGRESS while the first request is in flight", async () => {
    sb.setFaults({ latencyMs: 400 });
    try {
      const slow = post(sb, "key-inflight", { ...ACH_PAYMENT, metadata: { test: "inflight" } });
      await waitFor(() => (sb.state.idempotency.inFlightCount() > 0 ? true : undefined));
      sb.setFaults({ latencyMs: 0 });
      const concurrent = await post(sb, "key-inflight", { ...ACH_PAYMENT, metadata: { test: "inflight" } });
      expectError(concurrent, 409, "conflict_error", "IDEMPOTENCY_KEY_IN_PROGRESS");
      expect((await slow).status).toBe(201);
      const after = await post(sb, "key-inflight", { ...ACH_PAYMENT, metadata: { test: "inflight" } });
      expect(after.status).toBe(201);
      expect((await call(sb, "GET", "/payments?metadata[test]=inflight")).body.data).toHaveLength(1);
    } finally {
      sb.setFaults({ latencyMs: 0 });
    }
  });

  it("does not store injected 5xx answers, so a retry with the key succeeds", async () => {
    sb.setFaults({ failNextRequests: 1 });
    const body = { ...ACH_PAYMENT, metadata: { test: "retry-5xx" } };
    const failed = await post(sb, "key-5xx", body);
    expectError(failed, 503, "service_unavailable_error");
    const retried = await post(sb, "key-5xx", body);
    expect(retried.status).toBe(201);
  });
});

describe("sandbox idempotency expiry", () => {
  it("forgets keys after the retention period (24 h by default; shortened here)", async () => {
    const sb = await startSandbox({
      idempotencyTtlMs: 30,
      clock: { toInProgressMs: 60_000, toFinalMs: 60_000 },
    });
    try {
      const first = await post(sb, "key-expiring", ACH_PAYMENT);
      await new Promise((r) => setTimeout(r, 60));
      const later = await post(sb, "key-expiring", ACH_PAYMENT);
      expect(later.status).toBe(201);
      expect(later.body.id).not.toBe(first.body.id);
    } finally {
      await sb.close();
    }
  });
});

describe("sandbox idempotency: a replay is the first response, whatever the payment became since", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ clock: { toInProgressMs: 10, toFinalMs: 10 } });
  });
  afterAll(() => sb.close());

  it("replays the 201 as created after the payment completed (status, fees, updatedAt)", async () => {
    const body = {
      ...ACH_PAYMENT,
      originatingAccountId: "acct_corporate_card",
      receivingAccountId: "acct_vendor_check",
      deliveryPreference: "standard-check",
      payerMemo: "memo",
      recipientNote: "note",
      externalId: "replay-completed",
      metadata: { row: "r1" },
    };
    const first = await post(sb, "key-replay-completed", body);
    expect(first.status).toBe(201);
    await waitFor(async () => {
      const now = await call(sb, "GET", `/payments/${first.body.id}`);
      return now.body.status === "completed" ? now : undefined;
    });
    const now = await call(sb, "GET", `/payments/${first.body.id}`);
    expect(now.body.fees.length).toBeGreaterThan(0);
    expect(now.body.updatedAt).not.toBe(now.body.createdAt);
    const again = await post(sb, "key-replay-completed", body);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body));
  });

  it("replays the memo, note and metadata as created after a PATCH changed them", async () => {
    // An amount ending in 77 stays scheduled, so it can be edited.
    const body = { ...ACH_PAYMENT, amount: 10_077, payerMemo: "before", metadata: { row: "r2" } };
    const first = await post(sb, "key-replay-edited", body);
    expect(first.status).toBe(201);
    await new Promise((r) => setTimeout(r, 5));
    const patched = await call(sb, "PATCH", `/payments/${first.body.id}`, {
      body: { payerMemo: "after", recipientNote: "added", metadata: { row: "r2", more: "x" } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ payerMemo: "after", recipientNote: "added" });
    const again = await post(sb, "key-replay-edited", body);
    expect(again.status).toBe(201);
    expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body));
    const listed = await call(sb, "GET", "/payments?metadata[more]=x");
    expect(listed.body.data.map((p: { id: string }) => p.id)).toEqual([first.body.id]);
  });
});
