/**
 * The indexed payment list (payment-store.ts) must answer exactly what the plain definition answers:
 * filter every payment, sort newest first, cut the page at the cursor (pagination.ts `paginate`).
 * Random payments, clock steps (some backwards), status changes, metadata edits and random queries.
 */
import { describe, expect, it } from "vitest";
import { loadDefaultSeed, parseSeed, SandboxState } from "../src/index.js";
import { matchesCommonFilters, paginate, parseListQuery } from "../src/pagination.js";
import { createPayment, listPayments, updatePayment } from "../src/payments.js";
import type { StoredPayment } from "../src/state.js";

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const STATUSES = ["scheduled", "in-progress", "completed", "failed", "canceled"] as const;
const RECEIVERS = ["acct_vendor_ach", "acct_vendor_ach_2"];

describe("sandbox payment store", () => {
  it("lists exactly what filtering and sorting every payment would", async () => {
    const random = prng(7);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
    let clock = Date.parse("2026-01-01T00:00:00Z");
    const state = new SandboxState(parseSeed(await loadDefaultSeed()), () => clock);
    const entityId = "ent_acme_corp";
    const created: StoredPayment[] = [];
    for (let i = 0; i < 400; i++) {
      // Mostly forward, sometimes the same millisecond, sometimes backwards.
      clock += pick([0, 0, 1, 5, 1000, -3]);
      createPayment(
        state,
        entityId,
        {
          amount: 100 + i,
          originatingAccountId: "acct_ops_checking",
          receivingAccountId: pick(RECEIVERS),
          deliveryPreference: "standard-ach",
          ...(random() < 0.5 ? { externalId: `ext-${i}` } : {}),
          ...(random() < 0.8 ? { metadata: { batch: pick(["a", "b", "c"]), row: String(i % 7) } } : {}),
        },
        { onCreated: (s) => created.push(s) },
      );
      const some = pick(created);
      if (random() < 0.2 && some.status === "scheduled") {
        if (random() < 0.5)
          updatePayment(state, entityId, some.id, { metadata: { batch: pick(["a", "b", "d"]) } });
        else updatePayment(state, entityId, some.id, { status: "canceled" });
      } else if (random() < 0.3 && some.status === "scheduled") {
        state.payments.setStatus(some, "in-progress");
        if (random() < 0.5) state.payments.setStatus(some, pick(["completed", "failed"]));
      }
    }
    expect(state.payments.size).toBe(400);

    for (let n = 0; n < 600; n++) {
      const params = new URLSearchParams();
      params.set("limit", String(pick([1, 2, 5, 50])));
      if (random() < 0.3) params.set("metadata[batch]", pick(["a", "b", "c", "d", "z"]));
      if (random() < 0.2) params.set("metadata[row]", String(Math.floor(random() * 8)));
      if (random() < 0.3) params.set("status", pick(STATUSES));
      if (random() < 0.2) params.set("receivingAccountId", pick(RECEIVERS));
      if (random() < 0.1)
        params.set("originatingAccountId", pick(["acct_ops_checking", "acct_corporate_card"]));
      if (random() < 0.1) params.set("externalId", `ext-${Math.floor(random() * 420)}`);
      if (random() < 0.2) params.set("created[gte]", new Date(pick(created).createdMs).toISOString());
      if (random() < 0.2) params.set("created[lte]", new Date(pick(created).createdMs).toISOString());
      const cursor = random();
      if (cursor < 0.3) params.set("startingAfter", pick(created).id);
      else if (cursor < 0.5) params.set("endingBefore", pick(created).id);

      const q = parseListQuery(params);
      const status = params.get("status");
      const receiving = params.get("receivingAccountId");
      const originating = params.get("originatingAccountId");
      const all = [...state.payments.values()].filter(
        (p) =>
          p.entityId === entityId &&
          matchesCommonFilters(p, q) &&
          (status === null || p.status === status) &&
          (receiving === null || p.receivingAccountId === receiving) &&
          (originating === null || p.originatingAccountId === originating),
      );
      const expected = paginate(all, q, new Map(created.map((p) => [p.id, p])));
      const actual = listPayments(state, entityId, q, params);
      expect({
        query: params.toString(),
        ids: actual.data.map((p) => p.id),
        hasMore: actual.hasMore,
      }).toEqual({
        query: params.toString(),
        ids: expected.data.map((p) => p.id),
        hasMore: expected.hasMore,
      });
    }
  });
});
