/**
 * Reconcile work gathered under load, on a real Redis: the look marker folds the deliveries that
 * arrive together into one Redis call (one mark per row) and loses none that arrive while a call is
 * under way; a mark made again is not cleared by a look that read it before; a batch whose rows turn
 * final together is checked (and finished) once, after its last row.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { startSandbox } from "@payouts/sandbox";
import type { Command } from "ioredis";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Payment } from "../../../src/payouts-api/index.js";
import { connectRedis } from "../../../src/pipeline/index.js";
import { createReconcileProcessor, LookIndex, lookMarker } from "../../../src/reconcile/index.js";
import type { RedisClient } from "../../../src/redis/index.js";
import { deleteKeys, instruction, pipelineHarness, REDIS_URL } from "../pipeline/helpers.js";

let cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

function markerFor(label: string) {
  const redis = connectRedis(REDIS_URL);
  const prefix = `coalesce-${label}-${Date.now()}`;
  cleanups.push(async () => {
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });
  return { redis, prefix, marker: lookMarker(redis, prefix), index: new LookIndex(redis, prefix) };
}

/**
 * Counts the script calls sent on `redis` (EVAL or EVALSHA: the Lua loader's commands), and lets a test
 * hold back or fail the next one.
 */
function scriptCalls(redis: RedisClient) {
  const send = redis.sendCommand.bind(redis) as (command: Command, stream?: unknown) => unknown;
  let count = 0;
  // A command sent before the connection is ready is sent again from the offline queue: counted once.
  const seen = new WeakSet<Command>();
  let next: ((command: Command, go: () => unknown) => unknown) | undefined;
  vi.spyOn(redis, "sendCommand").mockImplementation(((command: Command, stream?: unknown) => {
    const go = () => send(command, stream);
    if ((command.name !== "evalsha" && command.name !== "eval") || seen.has(command)) return go();
    seen.add(command);
    count++;
    const hook = next;
    next = undefined;
    return hook ? hook(command, go) : go();
  }) as never);
  return {
    get count() {
      return count;
    },
    /** The next script call waits for `until` before it is sent. */
    holdNext(until: Promise<void>) {
      next = async (_, go) => {
        await until;
        return go();
      };
    },
    /** The next script call fails as if Redis refused it. */
    failNext(err: Error) {
      next = (command) => {
        command.reject(err);
        return command.promise;
      };
    },
  };
}

const delivery = (paymentId: string, row: string, messageId: string) => ({
  kind: "payment" as const,
  paymentId,
  origin: "webhook" as const,
  event: "api.payment.updated",
  messageId,
  metadata: { payouts_batch: "b1", payouts_row: row, payouts_attempt: "1" },
});

describe("the look marker", () => {
  it("folds a burst of deliveries into one Redis call, one mark per row; every caller learns it was stored", async () => {
    const { redis, marker, index } = markerFor("burst");
    const calls = scriptCalls(redis);
    await Promise.all(
      Array.from({ length: 30 }, (_, i) => marker.enqueue(delivery(`pay_${i % 3}`, `R${i % 3}`, `m${i}`))),
    );
    expect(calls.count).toBe(1);
    const marks = await index.dueMarks("b1", Number.MAX_SAFE_INTEGER, 100);
    expect(marks.map((m) => [m.member, m.hint?.paymentId]).sort()).toEqual([
      ["R0", "pay_0"],
      ["R1", "pay_1"],
      ["R2", "pay_2"],
    ]);
  });

  it("keeps a delivery that arrives while a call is under way, and stores it right after", async () => {
    const { redis, marker, index } = markerFor("later");
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const calls = scriptCalls(redis);
    calls.holdNext(held);
    const first = marker.enqueue(delivery("pay_a", "RA", "1"));
    await sleep(20);
    expect(calls.count).toBe(1);
    const second = marker.enqueue(delivery("pay_b", "RB", "2"));
    const third = marker.enqueue(delivery("pay_a", "RA", "3"));
    await sleep(20);
    // Gathered while the first call is under way.
    expect(calls.count).toBe(1);
    release();
    await Promise.all([first, second, third]);
    expect(calls.count).toBe(2);
    const marks = await index.dueMarks("b1", Number.MAX_SAFE_INTEGER, 100);
    expect(marks.map((m) => m.member).sort()).toEqual(["RA", "RB"]);
  });

  it("moves a row's mark forward when it is made again, so a look that read it earlier does not clear it", async () => {
    const { marker, index } = markerFor("again");
    await marker.enqueue(delivery("pay_x", "RX", "1"));
    const [read] = await index.dueMarks("b1", Number.MAX_SAFE_INTEGER, 10);
    await marker.enqueue(delivery("pay_x", "RX", "2"));
    // The look that read the first mark finishes: the second delivery's mark stays.
    expect(await index.clear("b1", [read!])).toBe(0);
    const [now] = await index.dueMarks("b1", Number.MAX_SAFE_INTEGER, 10);
    expect(Number(now!.score)).toBeGreaterThan(Number(read!.score));
    expect(await index.clear("b1", [now!])).toBe(1);
    expect(await index.pending("b1")).toBe(0);
  });

  it("fails every caller of a call that Redis refused (the receiver then answers 503)", async () => {
    const { redis, marker } = markerFor("refused");
    scriptCalls(redis).failNext(new Error("Redis is gone"));
    const results = await Promise.allSettled([
      marker.enqueue(delivery("pay_x", "RX", "1")),
      marker.enqueue(delivery("pay_y", "RY", "2")),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });
});

describe("the batch finish check", () => {
  it("runs once for rows that turn final together, after the last, and finishes the batch once", async () => {
    const sandbox = await startSandbox({ clock: { toInProgressMs: 3_600_000, toFinalMs: 3_600_000 } });
    cleanups.push(() => sandbox.close());
    const h = await pipelineHarness(sandbox, "coalesce-finish");
    cleanups.push(() => h.close());
    const rows = Array.from({ length: 12 }, (_, i) => instruction({ amount: 20_000 + i * 100 }));
    const batchId = await h.submit(rows);
    const finished: string[] = [];
    const progress = vi.spyOn(h.store, "progress");
    const processor = createReconcileProcessor({
      store: h.store,
      client: h.api,
      finishCheckDelayMs: 50,
      onBatchFinished: (id) => void finished.push(id),
    });
    // The service's final answer for every row (as a GET would return it), applied all at once.
    const now = new Date().toISOString();
    const payments = rows.map(
      (row, i) =>
        ({
          id: `pay_fin_${i}`,
          status: "completed",
          updatedAt: now,
          metadata: { payouts_batch: batchId, payouts_row: row.rowKey, payouts_attempt: "1" },
        }) as unknown as Payment,
    );
    const results = await Promise.all(payments.map((p) => processor.applyPayment(p)));
    expect(results.every((r) => r.outcome === "updated")).toBe(true);
    expect((await h.store.getBatch(batchId))?.finishedAt).toBeUndefined();
    await sleep(300);
    expect((await h.store.getBatch(batchId))?.finishedAt).toBeDefined();
    expect(finished).toEqual([batchId]);
    // One progress read for twelve final rows (it was one per row).
    expect(progress).toHaveBeenCalledTimes(1);
  });

  it("runs a waiting check at once when the service stops, and starts none after (no check on a closed connection)", async () => {
    const sandbox = await startSandbox({ clock: { toInProgressMs: 3_600_000, toFinalMs: 3_600_000 } });
    cleanups.push(() => sandbox.close());
    const h = await pipelineHarness(sandbox, "coalesce-flush");
    cleanups.push(() => h.close());
    const rows = [instruction({ amount: 31_000 }), instruction({ amount: 31_100 })];
    const batchId = await h.submit(rows);
    const finished: string[] = [];
    const errors: string[] = [];
    const logger = {
      info: () => {},
      warn: () => {},
      error: (_: object, msg?: string) => void errors.push(String(msg)),
    };
    const processor = createReconcileProcessor({
      store: h.store,
      client: h.api,
      // Far longer than the test: only the stop can run it.
      finishCheckDelayMs: 3_600_000,
      onBatchFinished: (id) => void finished.push(id),
      logger: logger as never,
    });
    const completed = (rowKey: string, id: string) =>
      ({
        id,
        status: "completed",
        updatedAt: new Date().toISOString(),
        metadata: { payouts_batch: batchId, payouts_row: rowKey, payouts_attempt: "1" },
      }) as unknown as Payment;
    expect((await processor.applyPayment(completed(rows[0]!.rowKey, "pay_flush_0"))).outcome).toBe("updated");
    expect((await processor.applyPayment(completed(rows[1]!.rowKey, "pay_flush_1"))).outcome).toBe("updated");
    expect((await h.store.getBatch(batchId))?.finishedAt).toBeUndefined();
    await processor.flushFinishChecks();
    expect((await h.store.getBatch(batchId))?.finishedAt).toBeDefined();
    expect(finished).toEqual([batchId]);
    // After the stop, a row turning final asks for no check: none can run later on a closed connection.
    const progress = vi.spyOn(h.store, "progress");
    await processor.finishIfDone(batchId);
    progress.mockClear();
    await processor.applyPayment({
      ...completed(rows[0]!.rowKey, "pay_flush_0"),
      updatedAt: new Date(Date.now() + 1000).toISOString(),
    } as Payment);
    await sleep(100);
    expect(progress).not.toHaveBeenCalled();
    expect(errors).toEqual([]);
  });
});
