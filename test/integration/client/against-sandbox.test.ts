/**
 * The client against the real sandbox (@payouts/sandbox) under fault injection: whatever the transport
 * does (503s, 429s, connections dropped after the payment was stored), creating N payments with N
 * distinct idempotency keys must leave exactly one payment per key on the ledger.
 */
import { randomUUID } from "node:crypto";
import { startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AttemptInfo,
  createPayoutsClient,
  type Payment,
  type PayoutsClient,
} from "../../../src/payouts-api/index.js";

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

let sandbox: Sandbox;
let client: PayoutsClient;
let fromAccount: string;
const attempts: AttemptInfo[] = [];
let toAccount: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  client = createPayoutsClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    entityId: sandbox.entityId,
    timeoutMs: 5_000,
    // Many cheap tries: with ~45% of tries failing on purpose, 15 tries make a spurious failure
    // astronomically unlikely, and short backoffs keep the suite fast.
    retry: { maxAttempts: 15, baseDelayMs: 5, maxDelayMs: 50 },
    hooks: { onResponse: (info) => attempts.push(info) },
  });
  const internal = await collect(client.accounts.listAll({ ownershipType: "internal", type: "ach" }));
  const external = await collect(client.accounts.listAll({ ownershipType: "external", type: "ach" }));
  const verified = internal.find((a) => a.isVerified === true);
  if (!verified || !external[0])
    throw new Error("the sandbox seed needs a verified internal and an external ACH account");
  fromAccount = verified.id;
  toAccount = external[0].id;
});

afterAll(async () => {
  await client?.close();
  await sandbox?.close();
});

async function createPayments(run: string, count: number): Promise<Map<string, Payment>> {
  const created = new Map<string, Payment>();
  await Promise.all(
    Array.from({ length: count }, async (_, row) => {
      const idempotencyKey = randomUUID();
      const payment = await client.payments.create(
        {
          amount: 1_000 + row,
          originatingAccountId: fromAccount,
          receivingAccountId: toAccount,
          deliveryPreference: "standard-ach",
          externalId: `${run}-${row}`,
          metadata: { run, row: String(row) },
        },
        { idempotencyKey },
      );
      created.set(idempotencyKey, payment);
    }),
  );
  return created;
}

async function ledgerFor(run: string): Promise<Payment[]> {
  return collect(client.payments.listAll({ metadata: { run }, limit: 7 }));
}

describe("payouts client against the sandbox", () => {
  it("creates exactly one payment per key when the next responses fail or are dropped", async () => {
    const run = `det${randomUUID().slice(0, 8)}`;
    sandbox.setFaults({ failNextRequests: 2, rateLimitNextRequests: 1, dropNextPaymentResponses: 2 });
    attempts.length = 0;

    const created = await createPayments(run, 3);
    sandbox.setFaults({ failNextRequests: 0, rateLimitNextRequests: 0, dropNextPaymentResponses: 0 });

    // The faults really happened, and the client rode them out.
    const failures = attempts.filter((a) => a.status !== 201).map((a) => a.status);
    expect(failures.sort()).toEqual([0, 0, 429, 503, 503]);

    const ledger = await ledgerFor(run);
    expect(ledger.map((p) => p.metadata?.row).sort()).toEqual(["0", "1", "2"]);
    expect(new Set(ledger.map((p) => p.id))).toEqual(new Set([...created.values()].map((p) => p.id)));
  });

  it("creates exactly one payment per key under random 5xx, 429 and dropped responses", async () => {
    const run = `rnd${randomUUID().slice(0, 8)}`;
    const count = 12;
    sandbox.setFaults({ errorRate5xx: 0.3, dropAfterStoreRate: 0.3, rateLimitRate: 0.1 });

    const created = await createPayments(run, count);
    sandbox.setFaults({ errorRate5xx: 0, dropAfterStoreRate: 0, rateLimitRate: 0 });

    const ledger = await ledgerFor(run);
    expect(ledger).toHaveLength(count);
    const rows = ledger.map((p) => Number(p.metadata?.row)).sort((a, b) => a - b);
    expect(rows).toEqual(Array.from({ length: count }, (_, i) => i));
    // Every key's answer names the payment that is on the ledger (a replay, not a second payment).
    expect(new Set(ledger.map((p) => p.id))).toEqual(new Set([...created.values()].map((p) => p.id)));
  });

  it("reads every kind of resource the sandbox serves through the typed schemas", async () => {
    const entities = await collect(client.entities.listAll());
    expect(entities.map((e) => e.id)).toContain(sandbox.entityId);

    const limitations = await client.limitations.get();
    expect(limitations.capabilities.map((c) => c.operation)).toContain("payment.domestic:write");

    const owners = await client.beneficialOwners.get(sandbox.entityId);
    expect(owners.some((o) => o.types.includes("fx-account-holder"))).toBe(true);

    const account = await client.accounts.get(toAccount);
    expect(account).toMatchObject({ id: toAccount, ownershipType: "external", type: "ach" });

    await expect(client.webhook.eventTypes()).resolves.toContain("api.payment.updated");

    const fees = await client.tools.feeCalculator({
      amount: 5_000,
      deliveryPreference: "standard-ach",
      originatingAccountId: fromAccount,
      receivingAccountId: toAccount,
    });
    expect(Array.isArray(fees.fees)).toBe(true);

    await expect(client.payments.get("pay_does_not_exist")).rejects.toMatchObject({
      status: 404,
      type: "not_found_error",
    });
  });
});
