import { describe, expect, it } from "vitest";
import {
  canTransition,
  isTerminalRowState,
  ROW_STATES,
  rowStateForPayment,
  TERMINAL_ROW_STATES,
} from "../../../src/batches/index.js";

describe("row state machine", () => {
  it("moves forward only: queued → submitted → in-progress → a final state", () => {
    expect(canTransition("queued", "submitted")).toBe(true);
    expect(canTransition("submitted", "in-progress")).toBe(true);
    expect(canTransition("in-progress", "completed")).toBe(true);
    expect(canTransition("queued", "rejected")).toBe(true);
    expect(canTransition("in-progress", "submitted")).toBe(false);
    expect(canTransition("submitted", "queued")).toBe(false);
  });

  it("never leaves a terminal state, except `error` adopting the payment the ledger shows", () => {
    for (const from of TERMINAL_ROW_STATES) {
      for (const to of ROW_STATES) {
        const allowed = canTransition(from, to);
        if (
          from === "error" &&
          ["submitted", "in-progress", "completed", "failed", "canceled"].includes(to)
        ) {
          expect(allowed, `${from} → ${to}`).toBe(true);
        } else {
          expect(allowed, `${from} → ${to}`).toBe(false);
        }
      }
    }
    expect(isTerminalRowState("submitted")).toBe(false);
  });

  it("maps payment statuses to row states (scheduled is `submitted`)", () => {
    expect(rowStateForPayment("scheduled")).toBe("submitted");
    expect(rowStateForPayment("in-progress")).toBe("in-progress");
    expect(rowStateForPayment("completed")).toBe("completed");
    expect(rowStateForPayment("failed")).toBe("failed");
    expect(rowStateForPayment("canceled")).toBe("canceled");
  });
});
