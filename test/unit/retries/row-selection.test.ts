import { describe, expect, it } from "vitest";
import type { RowState } from "../../../src/batches/index.js";
import { parseRowSpec, planRetry, type RetryCandidate, RowSpecError } from "../../../src/retries/index.js";

describe("--rows", () => {
  it("reads row numbers and ranges as the sheet shows them", () => {
    expect(parseRowSpec("3,7-9")).toEqual([3, 7, 8, 9]);
    expect(parseRowSpec(" 9 , 3, 3,2-2 ")).toEqual([2, 3, 9]);
  });

  it("refuses what is not a row list, saying which part is wrong", () => {
    for (const bad of ["", "a", "3,x", "9-7", "0", "1-", "-3", "2.5"]) {
      expect(() => parseRowSpec(bad), bad).toThrow(RowSpecError);
    }
    expect(() => parseRowSpec("3,9-7")).toThrow(/"9-7"/);
    expect(() => parseRowSpec("1-99999999")).toThrow(/too many/);
  });
});

function row(rowNumber: number, state: RowState, attempt = 1): RetryCandidate {
  return { rowNumber, rowKey: `r${rowNumber}`, state, attempt };
}

describe("which rows a retry touches", () => {
  const rows = [
    row(2, "completed"),
    row(3, "failed"),
    row(4, "rejected", 2),
    row(5, "error"),
    row(6, "canceled"),
    row(7, "queued"),
    row(8, "submitted"),
    row(9, "in-progress"),
  ];

  it("without --rows retries every failed, rejected, error and canceled row, and nothing else", () => {
    const plan = planRetry(rows, new Set());
    expect(plan.retry.map((r) => r.rowNumber)).toEqual([3, 4, 5, 6]);
    expect(plan.leftAlone).toEqual([]);
  });

  it("with --rows says for every other requested row why it was left alone", () => {
    const plan = planRetry(rows, new Set([10]), [2, 3, 7, 8, 9, 10, 42]);
    expect(plan.retry.map((r) => r.rowNumber)).toEqual([3]);
    const reasons = Object.fromEntries(plan.leftAlone.map((l) => [l.rowNumber, l.reason]));
    expect(reasons[2]).toMatch(/already paid/);
    expect(reasons[7]).toMatch(/in flight \(queued\)/);
    expect(reasons[8]).toMatch(/in flight \(submitted\)/);
    expect(reasons[9]).toMatch(/in flight \(in-progress\)/);
    expect(reasons[10]).toMatch(/invalid in the sheet/);
    expect(reasons[42]).toMatch(/no such row/);
  });

  it("never retries a row rejected because its reference was used before, asked or not", () => {
    const reused = [{ ...row(3, "rejected"), errorCode: "REFERENCE_REUSED" }, row(4, "rejected")];
    expect(planRetry(reused, new Set()).retry.map((r) => r.rowNumber)).toEqual([4]);
    const asked = planRetry(reused, new Set(), [3]);
    expect(asked.retry).toEqual([]);
    expect(asked.leftAlone[0]?.reason).toMatch(/reference was already used/);
  });
});
