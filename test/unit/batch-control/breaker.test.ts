/** The circuit breaker's decision, held to its two rules directly (it is pure). */
import { describe, expect, it } from "vitest";
import { breakerVerdict, DEFAULT_BREAKER } from "../../../src/batch-control/index.js";

const settings = { sameCode: 3, window: 10, failures: 7 };

describe("breakerVerdict", () => {
  it("trips when the same refusal code comes N times in a row, naming the code", () => {
    expect(breakerVerdict({ code: "ATTACHMENT_REQUIRED", run: 2, seen: 2, failures: 2 }, settings)).toEqual({
      trip: false,
    });
    const verdict = breakerVerdict({ code: "ATTACHMENT_REQUIRED", run: 3, seen: 3, failures: 3 }, settings);
    expect(verdict).toEqual({ trip: true, reason: "3 rows in a row were refused with ATTACHMENT_REQUIRED" });
  });

  it("trips when most of a full window was refused, whatever the codes, and not before the window is full", () => {
    expect(breakerVerdict({ code: "X", run: 1, seen: 9, failures: 9 }, { ...settings, sameCode: 0 })).toEqual(
      { trip: false },
    );
    expect(breakerVerdict({ code: "X", run: 1, seen: 10, failures: 7 }, settings)).toMatchObject({
      trip: true,
      reason: "7 of the last 10 rows were refused",
    });
    expect(breakerVerdict({ code: "", run: 0, seen: 10, failures: 6 }, settings)).toEqual({ trip: false });
  });

  it("never trips on a paid row's counts alone, and a rule set to 0 is off", () => {
    expect(breakerVerdict({ code: "", run: 0, seen: 10, failures: 0 }, settings)).toEqual({ trip: false });
    expect(
      breakerVerdict(
        { code: "X", run: 50, seen: 10, failures: 10 },
        { sameCode: 0, window: 10, failures: 0 },
      ),
    ).toEqual({
      trip: false,
    });
  });

  it("has defaults where a few bad payees in a large batch do not trip it", () => {
    expect(
      breakerVerdict({ code: "TO_ACCOUNT_CLOSED", run: 5, seen: 50, failures: 5 }, DEFAULT_BREAKER),
    ).toEqual({
      trip: false,
    });
  });
});
