/**
 * Keeping a result file current costs a bounded share of a worker's time whatever the batch size
 *: however long one write takes and however often rows change, the outbox waits
 * WRITE_SPACING times the last write's duration before the next, and still writes after the last
 * change. Fake timers stand in for slow writes, so nothing here depends on the machine's speed.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { BatchStore } from "../../../src/batches/index.js";
import {
  createResultOutbox,
  REFRESH_FACTOR,
  type ResultFiles,
  WRITE_SPACING,
} from "../../../src/results/index.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A result writer whose every write takes `writeMs` (of fake time); records when each started. */
function slowFiles(writeMs: number): ResultFiles & { starts: number[]; busyMs: () => number } {
  const starts: number[] = [];
  return {
    starts,
    busyMs: () => starts.length * writeMs,
    resultFile: async () => undefined,
    write: async (batchId) => {
      starts.push(Date.now());
      await new Promise((r) => setTimeout(r, writeMs));
      return { path: `/tmp/${batchId}.csv`, format: "csv", rows: 1_000_000 };
    },
  };
}

describe("the result outbox at scale", () => {
  it.each([500, 5_000, 30_000])(
    "spends at most 1/(1+WRITE_SPACING) of the time writing when one write takes %i ms",
    async (writeMs) => {
      const files = slowFiles(writeMs);
      const outbox = createResultOutbox({
        store: {} as BatchStore,
        dataDir: "/tmp",
        files,
        debounceMs: 2_000,
      });
      const start = Date.now();
      // Rows change every 100 ms (every second for slow writes) for ten minutes, or for 16 write
      // periods if longer (the first write comes after the debounce alone: a few periods would
      // overstate the share).
      const total = Math.max(600_000, writeMs * (1 + WRITE_SPACING) * 16);
      const step = total > 600_000 ? 1_000 : 100;
      for (let t = 0; t < total; t += step) {
        outbox.markDirty("b1");
        await vi.advanceTimersByTimeAsync(step);
      }
      const elapsed = Date.now() - start;
      expect(files.busyMs() / elapsed).toBeLessThanOrEqual(1 / (1 + WRITE_SPACING) + 0.01);
      for (let i = 2; i < files.starts.length; i++) {
        // Each write starts at least WRITE_SPACING times one write's duration after the previous ended.
        expect(files.starts[i]! - (files.starts[i - 1]! + writeMs)).toBeGreaterThanOrEqual(
          Math.max(2_000 * REFRESH_FACTOR, writeMs * WRITE_SPACING),
        );
      }
      // The last change is still written, and writeNow (the batch finished) writes at once.
      const before = files.starts.length;
      await vi.advanceTimersByTimeAsync(writeMs * (WRITE_SPACING + 2) + 2_000);
      expect(files.starts.length).toBe(before + 1);
      const finished = outbox.writeNow("b1");
      await vi.advanceTimersByTimeAsync(writeMs);
      await finished;
      expect(files.starts.length).toBe(before + 2);
      await outbox.close();
    },
  );

  it("writes a batch's first change after one debounce period, then refreshes it at most every REFRESH_FACTOR periods", async () => {
    const files = slowFiles(10);
    const outbox = createResultOutbox({ store: {} as BatchStore, dataDir: "/tmp", files, debounceMs: 2_000 });
    const start = Date.now();
    // A batch paid at a service's pace: a row changes every 10 ms for a minute.
    for (let t = 0; t < 60_000; t += 10) {
      outbox.markDirty("b1");
      await vi.advanceTimersByTimeAsync(10);
    }
    expect(files.starts[0]! - start).toBe(2_000);
    for (let i = 1; i < files.starts.length; i++) {
      expect(files.starts[i]! - (files.starts[i - 1]! + 10)).toBeGreaterThanOrEqual(2_000 * REFRESH_FACTOR);
    }
    // One write after the debounce, then one per refresh period: not one every debounce period.
    expect(files.starts.length).toBe(1 + Math.floor((60_000 - 2_000) / (2_000 * REFRESH_FACTOR + 10)));
    // A batch whose changes stopped and started again is written one debounce period after them.
    await vi.advanceTimersByTimeAsync(2_000 * REFRESH_FACTOR + 100);
    const written = files.starts.length;
    await vi.advanceTimersByTimeAsync(60_000);
    const again = Date.now();
    outbox.markDirty("b1");
    await vi.advanceTimersByTimeAsync(2_010);
    expect(files.starts.length).toBe(written + 1);
    expect(files.starts[written]! - again).toBe(2_000);
    await outbox.close();
  });
});
