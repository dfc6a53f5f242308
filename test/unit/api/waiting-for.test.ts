import { describe, expect, it } from "vitest";
import { QUIET_AFTER_MS, waitingFor } from "../../../src/api/row-views.js";
import type { RowRecord } from "../../../src/batches/index.js";
import { DEFAULT_SWEEP_EVERY_MS } from "../../../src/reconcile/index.js";

const now = Date.parse("2026-11-26T12:00:00.000Z");

/** A row in `state`, last changed `agoMs` before now (only what waitingFor reads). */
const row = (state: RowRecord["state"], agoMs: number, extra: Partial<RowRecord> = {}) =>
  ({ state, updatedAt: new Date(now - agoMs).toISOString(), ...extra }) as RowRecord;

describe("what a row not final waits for", () => {
  it("a row just sent waits for the service's confirmation, without talk of lost webhooks", () => {
    const text = waitingFor(row("submitted", 60_000), { heldForApproval: false, now });
    expect(text).toContain("waiting for the service's confirmation");
    expect(text).not.toContain("No word");
  });

  it("a row quiet for longer than the sweep waits says so, and when the sweep reads its payment", () => {
    const since = new Date(now - QUIET_AFTER_MS - 1000).toISOString();
    const by = new Date(now + DEFAULT_SWEEP_EVERY_MS).toISOString();
    for (const state of ["submitted", "in-progress"] as const) {
      const text = waitingFor(row(state, QUIET_AFTER_MS + 1000), { heldForApproval: false, now });
      expect(text).toContain(`No word from the service since ${since}`);
      expect(text).toContain(`the reconcile sweep reads the payment from the service itself, next by ${by}.`);
    }
  });

  it("a queued row names approval, a request still in doubt, or its turn; a final row waits for nothing", () => {
    expect(waitingFor(row("queued", 0), { heldForApproval: true, now })).toContain("Waiting for approval");
    expect(
      waitingFor(row("queued", 0, { inDoubtUntil: now + 30_000 }), { heldForApproval: false, now }),
    ).toBe(
      "Waiting until 2026-11-26T12:00:30.000Z before it is sent again: an earlier request may still reach the service.",
    );
    expect(waitingFor(row("queued", 0), { heldForApproval: false, now })).toContain("its turn");
    expect(waitingFor(row("completed", QUIET_AFTER_MS * 10), { heldForApproval: false, now })).toBeNull();
  });
});
