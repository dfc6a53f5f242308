/**
 * A long-running sandbox must not keep every FX quote it ever gave: expired ones are dropped as new
 * quotes are asked for (oldest first, stopping at the first one still kept), and a quote is kept a
 * minute past its expiry so that a payment using it late is refused as expired, not as unknown.
 */
import { describe, expect, it } from "vitest";
import { loadDefaultSeed } from "../src/seed.js";
import { SandboxState } from "../src/state.js";
import { fxQuote } from "../src/tools.js";

const TTL_MS = 300_000;
const GRACE_MS = 60_000;
const ask = (state: SandboxState) =>
  fxQuote(state, "ent_acme_corp", { receivingAccountId: "acct_supplier_eur", amount: 10_000 }, TTL_MS);

describe("sandbox FX quotes over time", () => {
  it("drops quotes past their expiry and the grace minute, and keeps the others", async () => {
    let now = 1_000_000;
    const state = new SandboxState(await loadDefaultSeed(), () => now);
    const early = [ask(state), ask(state), ask(state)].map((q) => q.quoteToken);
    now += 1000;
    const later = ask(state).quoteToken;
    expect(state.quotes.size).toBe(4);

    // The early three are exactly at the end of their grace minute: still kept.
    now = 1_000_000 + TTL_MS + GRACE_MS;
    ask(state);
    expect(state.quotes.size).toBe(5);

    // One millisecond on, they go; the one asked for a second later stays.
    now += 1;
    const newest = ask(state).quoteToken;
    for (const token of early) expect(state.quotes.has(token)).toBe(false);
    expect(state.quotes.has(later)).toBe(true);
    expect(state.quotes.has(newest)).toBe(true);
    expect(state.quotes.size).toBe(3);
  });

  it("holds only the last TTL's worth of quotes however many were given", async () => {
    let now = 0;
    const state = new SandboxState(await loadDefaultSeed(), () => now);
    // 20 quotes a second for an hour: 72,000 given, about 20 × 360 s alive at any time.
    for (let i = 0; i < 72_000; i++) {
      now = i * 50;
      ask(state);
    }
    expect(state.quotes.size).toBeLessThanOrEqual((TTL_MS + GRACE_MS) / 50 + 1);
    expect(state.quotes.size).toBeGreaterThan(TTL_MS / 50);
  });
});
