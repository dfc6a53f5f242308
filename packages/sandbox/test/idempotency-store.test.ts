/**
 * The columnar idempotency store against a plain model of the rules (idempotency.ts's header): same
 * key + same request replays, another request is a mismatch, an answered key is kept for the TTL, a
 * released key may be claimed again, an expired key is claimed anew, and a key still in flight when
 * it expires is kept until answered. Many keys over many TTLs exercise the sweep, the moving down
 * of rows and the rebuilt hash table.
 */
import { describe, expect, it } from "vitest";
import { IdempotencyStore, requestFingerprint } from "../src/idempotency.js";

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const fp = (body: unknown) => requestFingerprint({ route: "POST /payments", entityId: "e", body });

interface Model {
  fingerprint: string;
  state: "in-flight" | "done" | "released";
  expiresAt: number;
  status: number;
  body: unknown;
}

describe("IdempotencyStore", () => {
  it("answers as the plain model does over many keys, TTLs and sweeps", () => {
    const random = prng(11);
    let clock = 0;
    const ttl = 1000;
    // Bodies that are "payments" (objects with a slot) are kept as their slot through the codec.
    const payments = Array.from({ length: 50 }, (_, slot) => ({ slot }));
    const store = new IdempotencyStore(() => clock, ttl, {
      toRef: (b) => (payments.includes(b as { slot: number }) ? (b as { slot: number }).slot : undefined),
      fromRef: (slot) => payments[slot],
    });
    const fingerprints = [fp({ n: 0 }), fp({ n: 1 })];
    const model = new Map<string, Model>();
    const partners = ["key-a", "key-b"];
    let inFlight = 0;
    for (let step = 0; step < 15_000; step++) {
      clock += Math.floor(random() * 3);
      const partner = partners[Math.floor(random() * 2)] as string;
      const key = `k${Math.floor(random() * 3000)}`;
      const id = `${partner}/${key}`;
      const f = fingerprints[random() < 0.9 ? 0 : 1] as string;
      const action = random();
      const m = model.get(id);
      if (action < 0.6) {
        const got = store.claim(partner, key, f);
        let expected: string;
        if (m && m.expiresAt > clock && m.state !== "released") {
          if (m.fingerprint !== f) expected = "mismatch";
          else if (m.state === "in-flight") expected = "in-progress";
          else expected = "replay";
        } else expected = "claimed";
        expect({ step, kind: got.kind }).toEqual({ step, kind: expected });
        if (got.kind === "replay") expect(got.response).toEqual({ status: m?.status, body: m?.body });
        if (got.kind === "claimed") {
          if (m?.state === "in-flight") inFlight--;
          inFlight++;
          model.set(id, {
            fingerprint: f,
            state: "in-flight",
            expiresAt: clock + ttl,
            status: 0,
            body: undefined,
          });
        }
      } else if (m && action < 0.9) {
        const body = random() < 0.5 ? payments[Math.floor(random() * 50)] : { error: step };
        const status = random() < 0.5 ? 201 : 400;
        store.complete(partner, key, status, body);
        if (m.state === "in-flight") inFlight--;
        Object.assign(m, { state: "done", status, body });
      } else if (m) {
        store.release(partner, key);
        if (m.state === "in-flight") inFlight--;
        Object.assign(m, { state: "released", status: 0, body: undefined });
      }
      if (step % 100 === 0) expect(store.inFlightCount()).toBe(inFlight);
    }
    expect(store.inFlightCount()).toBe(inFlight);
    store.sweep();
    // Every record not expired, or still in flight, is kept. (A sweep stops at the first live row, so
    // an answered record queued behind it may be kept a little longer: at least these, then.)
    const kept = [...model.values()].filter((r) => r.expiresAt > clock || r.state === "in-flight").length;
    expect(store.size()).toBeGreaterThanOrEqual(kept);
    expect(store.reuseEvidence().count).toBeGreaterThan(0);
    // Once everything is answered and expired, two sweeps (the second for rows moved to the end by
    // the first) leave nothing.
    for (const [id, r] of model) {
      const [partner, key] = id.split("/") as [string, string];
      if (r.state === "in-flight") store.complete(partner, key, 201, { late: true });
    }
    expect(store.inFlightCount()).toBe(0);
    clock += 2 * ttl;
    store.sweep();
    store.sweep();
    expect(store.size()).toBe(0);
    expect(store.claim("key-a", "k1", fingerprints[0] as string).kind).toBe("claimed");
  });

  it("keeps a key still in flight past its TTL until answered, then replays it", () => {
    let clock = 0;
    const store = new IdempotencyStore(() => clock, 100);
    expect(store.claim("p", "slow", fp(1)).kind).toBe("claimed");
    for (let i = 0; i < 5000; i++) {
      clock += 1;
      expect(store.claim("p", `fast-${i}`, fp(i)).kind).toBe("claimed");
      store.complete("p", `fast-${i}`, 201, { i });
    }
    store.sweep();
    expect(store.size()).toBeLessThan(200);
    expect(store.claim("p", "slow", fp(1)).kind).toBe("claimed"); // expired: claimed anew
    expect(store.inFlightCount()).toBe(1);
    store.complete("p", "slow", 201, { done: true });
    expect(store.claim("p", "slow", fp(1))).toEqual({
      kind: "replay",
      response: { status: 201, body: { done: true } },
    });
    expect(store.claim("p", "slow", fp(2)).kind).toBe("mismatch");
    expect(store.claim("q", "slow", fp(2)).kind).toBe("claimed"); // another partner's key
  });
});
