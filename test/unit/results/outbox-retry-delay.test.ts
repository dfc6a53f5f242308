import { describe, expect, it } from "vitest";
import { MAX_RETRY_DELAY_MS, retryDelayMs } from "../../../src/results/result-outbox.js";

describe("a result file that cannot be written is tried again", () => {
  it("after a wait that doubles from the debounce and stops growing at a minute, for ever", () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(2_000, n))).toEqual([2_000, 4_000, 8_000, 16_000]);
    expect(retryDelayMs(2_000, 6)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(2_000, 1_000)).toBe(MAX_RETRY_DELAY_MS);
  });
});
