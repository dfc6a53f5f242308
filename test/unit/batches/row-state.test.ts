import { describe, expect, it } from "vitest";
import {
  canFollowPayment,
  canTransition,
  isTerminalRowState,
  RETRYABLE_ROW_STATES,
  ROW_STATES,
  rowStateFollowing,
  rowStateForPayment,
  TERMINAL_ROW_STATES,
} from "../../../src/batches/index.js";
import { TRANSITION_ROW } from "../../../src/batches/redis-scripts.js";

describe("row state machine", () => {
  it("moves forward only: queued → submitted → in-progress → a final state", () => {
    expect(canTransition("queued", "submitted")).toBe(true);
    expect(canTransition("submitted", "in-progress")).toBe(true);
    expect(canTransition("in-progress", "completed")).toBe(true);
    expect(canTransition("queued", "rejected")).toBe(true);
    expect(canTransition("in-progress", "submitted")).toBe(false);
    expect(canTransition("submitted", "queued")).toBe(false);
  });

  it("never leaves a terminal state on its own, except `error` adopting the payment the ledger shows", () => {
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

  it("follows its own payment between final states: a completed payment failed or canceled later is `returned`", () => {
    expect(rowStateFollowing("completed", "failed")).toBe("returned");
    expect(rowStateFollowing("completed", "canceled")).toBe("returned");
    expect(rowStateFollowing("returned", "failed")).toBe("returned");
    expect(rowStateFollowing("returned", "completed")).toBe("completed");
    // A payment that never completed simply failed.
    expect(rowStateFollowing("in-progress", "failed")).toBe("failed");
    expect(rowStateFollowing("failed", "completed")).toBe("completed");
    expect(canFollowPayment("completed", "returned")).toBe(true);
    expect(canFollowPayment("completed", "failed")).toBe(false);
    expect(canFollowPayment("returned", "failed")).toBe(false);
    expect(canFollowPayment("failed", "completed")).toBe(true);
    expect(canFollowPayment("in-progress", "returned")).toBe(false);
    expect(canFollowPayment("rejected", "completed")).toBe(false);
    expect(canTransition("in-progress", "returned")).toBe(false);
    // The Lua twin is generated from the same table.
    expect(TRANSITION_ROW.source).toContain("['completed']={['returned']=true}");
  });

  it("`returned` is terminal and an operator may pay it again", () => {
    expect(isTerminalRowState("returned")).toBe(true);
    expect(RETRYABLE_ROW_STATES).toContain("returned");
  });

  it("maps payment statuses to row states (scheduled is `submitted`)", () => {
    expect(rowStateForPayment("scheduled")).toBe("submitted");
    expect(rowStateForPayment("in-progress")).toBe("in-progress");
    expect(rowStateForPayment("completed")).toBe("completed");
    expect(rowStateForPayment("failed")).toBe("failed");
    expect(rowStateForPayment("canceled")).toBe("canceled");
  });
});
