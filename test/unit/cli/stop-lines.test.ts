/** `payouts status <batch>` says when a batch is paused or canceled, by whom, why and what to do. */
import { describe, expect, it } from "vitest";
import { stopLines } from "../../../src/cli/commands/status.js";

describe("stopLines", () => {
  it("names the breaker, the reason and the two ways on", () => {
    const lines = stopLines(
      {
        paused: {
          by: "system:breaker",
          at: "2026-11-26T10:00:00.000Z",
          reason: "10 rows in a row were refused with X",
          byBreaker: true,
        },
        canceled: null,
      },
      "b1",
    );
    expect(lines[0]).toBe(
      "PAUSED by the circuit breaker at 2026-11-26T10:00:00.000Z: 10 rows in a row were refused with X",
    );
    expect(lines[1]).toContain("`payouts resume b1` or `payouts cancel b1`");
  });

  it("says canceled over paused, and nothing for a running batch", () => {
    const at = "2026-11-26T10:00:00.000Z";
    expect(
      stopLines(
        {
          paused: { by: "cli:ann", at, reason: "canceled", byBreaker: false },
          canceled: { by: "cli:ann", at },
        },
        "b1",
      ),
    ).toEqual([`canceled by cli:ann at ${at}: rows never sent are canceled`]);
    expect(stopLines({ paused: null, canceled: null }, "b1")).toEqual([]);
  });
});
