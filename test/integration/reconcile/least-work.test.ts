/**
 * Reconciliation by pages does the least work, on a real Redis and a real sandbox over HTTP: the rows
 * marked for a look are read by creation windows, a page of 50 payments per read, never a
 * `GET /payments/{id}` per row; a row that cannot be placed in time is read alone; a mark made again
 * while its page is read keeps the row marked; payments created while a page is read are neither
 * skipped nor read twice; and the sweep marks only the open rows that went quiet.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RowHead } from "../../../src/batches/index.js";
import type { Payment } from "../../../src/payouts-api/index.js";
import { createWorkerClient } from "../../../src/pipeline/index.js";
import {
  DUE_AT_ONCE_MS,
  type ReconcileService,
  startReconcileService,
} from "../../../src/reconcile/index.js";
import { retryRows } from "../../../src/retries/index.js";
import {
  instruction,
  type PipelineHarness,
  paymentMadeEarlier,
  pipelineHarness,
  REDIS_URL,
  waitForRows,
} from "../pipeline/helpers.js";

let cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

/** Payments that stay `scheduled`: only what the test does moves them. */
const HELD = { toInProgressMs: 3_600_000, toFinalMs: 3_600_000 };

async function stack(label: string, clock: { toInProgressMs: number; toFinalMs: number } = HELD) {
  const sandbox: RunningSandbox = await startSandbox({ clock });
  cleanups.push(() => sandbox.close());
  const h: PipelineHarness = await pipelineHarness(sandbox, label);
  cleanups.push(() => h.close());
  const client = createWorkerClient({ apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: "me" });
  const reconcile: ReconcileService = await startReconcileService({
    redisUrl: REDIS_URL,
    prefix: h.prefix,
    client,
    sweepEveryMs: 0,
    staleAfterMs: 60_000,
    // Looks only when the test asks (lookNow).
    lookEveryMs: 0,
  });
  cleanups.push(() => reconcile.stop(2000));
  /** The sandbox's request counters from now on. */
  const counting = () => {
    const before = sandbox.stats().requests;
    return () => {
      const now = sandbox.stats().requests;
      return { list: now.list - before.list, get: now.get - before.get };
    };
  };
  return { sandbox, h, client, reconcile, counting };
}

type Stack = Awaited<ReturnType<typeof stack>>;

/** A batch of `n` rows paid by the worker: every row holds its payment. */
async function paidBatch(s: Stack, n: number) {
  const rows = Array.from({ length: n }, (_, i) => instruction({ amount: 50_000 + i * 10 }));
  const batchId = await s.h.submit(rows);
  await s.h.startWorker();
  await waitForRows(s.h.store, batchId, (r) => r.paymentId !== undefined);
  return { rows, batchId };
}

/** Marks rows as a delivery would (due at once: the test does not wait out the quiet time). */
async function markRows(s: Stack, batchId: string, rowKeys: readonly string[]): Promise<void> {
  await s.reconcile.index.mark(
    rowKeys.map((member) => ({ batchId, member })),
    DUE_AT_ONCE_MS,
  );
}

/** Marks a row as a delivery about its payment's change at `occurredAt` would (due at once). */
async function markChange(s: Stack, batchId: string, head: RowHead, occurredAt: string): Promise<void> {
  await s.reconcile.index.mark(
    [
      {
        batchId,
        member: head.rowKey,
        hint: { paymentId: head.paymentId!, attempt: 1, occurredAtMs: Date.parse(occurredAt) },
      },
    ],
    DUE_AT_ONCE_MS,
  );
}

describe("a look at marked rows", () => {
  it("reads their payments by pages: 120 rows cost ceil(120/50) reads, no read per payment", async () => {
    const s = await stack("pages-120");
    const { rows, batchId } = await paidBatch(s, 120);
    await markRows(
      s,
      batchId,
      rows.map((r) => r.rowKey),
    );
    const reads = s.counting();
    const [report] = await s.reconcile.lookNow();
    expect(report).toMatchObject({ batchId, marks: 120, pages: 3, gets: 0, cleared: 120 });
    expect(reads()).toEqual({ list: 3, get: 0 });
    // Every row now holds the service's snapshot of its payment, and its mark is gone.
    const after = await s.h.store.listRows(batchId);
    expect(after.every((r) => r.paymentUpdatedAt !== undefined && r.paymentCreatedAt !== undefined)).toBe(
      true,
    );
    expect(await s.reconcile.index.pending(batchId)).toBe(0);
  });

  it("applies every payment on the page, and a later mark whose news the row already holds costs no read", async () => {
    const s = await stack("pages-settled");
    const { rows, batchId } = await paidBatch(s, 10);
    // The first and last rows: the window between them holds the other eight (few payments apart).
    const ends = [
      ...(await s.h.store.rowHeads(
        batchId,
        rows.map((r) => r.rowKey),
      )),
    ].sort((a, b) => Date.parse(a!.paymentCreatedAt!) - Date.parse(b!.paymentCreatedAt!));
    await markRows(s, batchId, [ends[0]!.rowKey, ends.at(-1)!.rowKey]);
    expect(await s.reconcile.lookNow()).toMatchObject([{ marks: 2, pages: 1, gets: 0 }]);
    const applied = await s.h.store.rowHeads(
      batchId,
      rows.map((r) => r.rowKey),
    );
    expect(applied.every((r) => r?.paymentUpdatedAt !== undefined)).toBe(true);
    // A delivery about a change the row has already seen (it was on the page read for row 0).
    const head = (await s.h.store.rowHeads(batchId, [rows[5]!.rowKey]))[0]!;
    await markChange(s, batchId, head, head.paymentUpdatedAt!);
    const reads = s.counting();
    const [report] = await s.reconcile.lookNow();
    expect(report).toMatchObject({ marks: 1, settled: 1, pages: 0, gets: 0, cleared: 1 });
    expect(reads()).toEqual({ list: 0, get: 0 });
  });

  it("reads a delivery whose change bears its payment's creation time: the create's answer is not that news", async () => {
    const s = await stack("same-ms");
    const { rows, batchId } = await paidBatch(s, 1);
    const head = (await s.h.store.rowHeads(batchId, [rows[0]!.rowKey]))[0]!;
    // A service may change a payment within the millisecond it created it; the answer to the create
    // showed it before that change.
    await markChange(s, batchId, head, head.paymentCreatedAt!);
    const [report] = await s.reconcile.lookNow();
    expect(report).toMatchObject({ marks: 1, settled: 0, pages: 1, cleared: 1 });
  });

  it("reads alone the odd row that does not know its payment yet, and adopts it through its metadata", async () => {
    // The worker made the payment and stopped before writing the answer on the row: only the
    // delivery tells about it, with the payment id as a hint.
    const s = await stack("pages-unknown");
    const row = instruction({ amount: 44_000 });
    const batchId = `b-least-unknown-${Date.now().toString(36)}`;
    await s.h.submit([row], { batchId });
    const payment = await paymentMadeEarlier(s.h.api, row, batchId, `least-unknown-${batchId}`);
    expect((await s.h.store.getRow(batchId, row.rowKey))?.paymentId).toBeUndefined();
    await s.reconcile.index.mark(
      [{ batchId, member: row.rowKey, hint: { paymentId: payment.id, attempt: 1, occurredAtMs: 0 } }],
      DUE_AT_ONCE_MS,
    );
    const reads = s.counting();
    const [report] = await s.reconcile.lookNow();
    expect(report).toMatchObject({ gets: 1, pages: 0, cleared: 1 });
    expect(reads()).toEqual({ list: 0, get: 1 });
    const adopted = await s.h.store.getRow(batchId, row.rowKey);
    expect(adopted).toMatchObject({ paymentId: payment.id, state: "submitted" });
  });

  it("keeps the mark of a row marked again while its page was read, and looks at it again", async () => {
    const s = await stack("pages-remark");
    const { rows, batchId } = await paidBatch(s, 5);
    await markRows(
      s,
      batchId,
      rows.map((r) => r.rowKey),
    );
    // While the page is on its way, a new delivery marks row 2 again.
    const listPages = s.client.payments.listPages.bind(s.client.payments);
    vi.spyOn(s.client.payments, "listPages").mockImplementationOnce(async function* (params) {
      await markRows(s, batchId, [rows[2]!.rowKey]);
      yield* listPages(params);
    });
    const [first] = await s.reconcile.lookNow();
    expect(first).toMatchObject({ marks: 5, cleared: 4 });
    expect(await s.reconcile.index.pending(batchId)).toBe(1);
    const [second] = await s.reconcile.lookNow();
    expect(second).toMatchObject({ marks: 1, cleared: 1 });
    expect(await s.reconcile.index.pending(batchId)).toBe(0);
  });

  it("with payments created while a page is read: none is skipped or read twice, and each row follows its own", async () => {
    const s = await stack("pages-growing");
    const { rows, batchId } = await paidBatch(s, 60);
    // Two rows of the same batch whose payments do not exist yet.
    const late = [instruction({ amount: 61_000 }), instruction({ amount: 61_010 })];
    const lateBatch = await s.h.submit(late, { batchId: `${batchId}-late` });
    await markRows(
      s,
      batchId,
      rows.map((r) => r.rowKey),
    );
    const seen: string[] = [];
    const listPages = s.client.payments.listPages.bind(s.client.payments);
    vi.spyOn(s.client.payments, "listPages").mockImplementation(async function* (params) {
      let first = true;
      for await (const page of listPages(params)) {
        seen.push(...page.map((p: Payment) => p.id));
        yield page;
        if (first) {
          first = false;
          // New payments of the batch appear at the service between two pages of the walk.
          for (const [i, row] of late.entries()) {
            await s.h.api.payments.create(
              {
                amount: row.amount,
                originatingAccountId: row.originatingAccountId,
                receivingAccountId: row.receivingAccountId,
                deliveryPreference: row.deliveryPreference,
                externalId: `${row.reference}-x`,
                metadata: { payouts_batch: batchId, payouts_row: `late-${i}`, payouts_attempt: "1" },
              },
              { idempotencyKey: `late-${batchId}-${i}` },
            );
          }
        }
      }
    });
    const [report] = await s.reconcile.lookNow();
    expect(report).toMatchObject({ marks: 60, pages: 2, gets: 0, cleared: 60 });
    // The walk saw every payment of the window once, and none created after it started.
    expect(seen).toHaveLength(60);
    expect(new Set(seen).size).toBe(60);
    const byRow = await s.h.store.listRows(batchId);
    expect(byRow.every((r) => r.paymentUpdatedAt !== undefined)).toBe(true);
    expect(lateBatch).toBeDefined();
  });
});

describe("the sweep", () => {
  it("marks only the open rows that went quiet, and a look reads their payments by pages", async () => {
    const s = await stack("least-sweep");
    const { rows, batchId } = await paidBatch(s, 40);
    await waitForRows(s.h.store, batchId, (r) => r.state === "submitted");
    const open = s.h.store.keys.open(batchId);
    expect(await s.h.pipeline.redis.zcard(open)).toBe(40);

    // Nothing is stale yet: the sweep reads no row at all.
    expect(await s.reconcile.sweep()).toMatchObject({ batches: 1, marked: 0, rowsRead: 0 });

    // Five rows untouched for an hour (their last touch moved back in the index).
    const quiet = rows.slice(0, 5).map((r) => r.rowKey);
    for (const rowKey of quiet) await s.h.pipeline.redis.zadd(open, Date.now() - 3_600_000, rowKey);
    expect(await s.reconcile.sweep()).toMatchObject({ marked: 5, rowsRead: 5 });
    const reads = s.counting();
    const [report] = await s.reconcile.lookNow();
    expect(report).toMatchObject({ marks: 5, gets: 0, cleared: 5 });
    expect(reads().get).toBe(0);
    expect(reads().list).toBeLessThanOrEqual(2);
    // Looked at now: the next sweep passes them by until they are stale again.
    expect(await s.reconcile.sweep()).toMatchObject({ marked: 0, rowsRead: 0 });
  });

  it("looks again at a retried row of a finished batch, and finishes the batch anew", async () => {
    const s = await stack("least-retry");
    const row = instruction();
    const batchId = await s.h.submit([row]);
    await s.h.startWorker();
    await waitForRows(s.h.store, batchId, (r) => r.state === "submitted");
    // The payment failed (as the service would say it): the batch is finished.
    await s.h.store.changeRow(batchId, row.rowKey, { to: "failed", fields: { paymentStatus: "failed" } });
    expect(await s.reconcile.sweep()).toMatchObject({ finished: 1 });
    expect((await s.h.store.getBatch(batchId))?.finishedAt).toBeDefined();

    const retried = await retryRows({ store: s.h.store, enqueuer: s.h.pipeline.enqueuer, batchId });
    expect(retried).toMatchObject({ kind: "done", retried: [{ attempt: 2 }] });
    await waitForRows(s.h.store, batchId, (r) => r.state === "submitted" && r.attempt === 2);
    expect((await s.h.store.getBatch(batchId))?.finishedAt).toBeUndefined();

    // Its new payment goes quiet: the sweep marks it (it ignored the batch before the fix).
    await s.h.pipeline.redis.zadd(s.h.store.keys.open(batchId), Date.now() - 3_600_000, row.rowKey);
    expect(await s.reconcile.sweep()).toMatchObject({ batches: 1, marked: 1, rowsRead: 1 });
    await s.h.store.changeRow(batchId, row.rowKey, {
      to: "completed",
      fields: { paymentStatus: "completed" },
    });
    expect(await s.reconcile.sweep()).toMatchObject({ finished: 1 });
    expect((await s.h.store.getBatch(batchId))?.finishedAt).toBeDefined();
  });
});

describe("several reconcilers", () => {
  it("share a batch's marks without both reading it: one claims it, the other finds nothing due", async () => {
    const s = await stack("least-two");
    const { rows, batchId } = await paidBatch(s, 20);
    const other = await startReconcileService({
      redisUrl: REDIS_URL,
      prefix: s.h.prefix,
      client: createWorkerClient({ apiUrl: s.sandbox.url, apiKey: s.sandbox.apiKey, entityId: "me" }),
      sweepEveryMs: 0,
      lookEveryMs: 0,
    });
    cleanups.push(() => other.stop(2000));
    await markRows(
      s,
      batchId,
      rows.map((r) => r.rowKey),
    );
    const reads = s.counting();
    const [a, b] = await Promise.all([s.reconcile.lookNow(), other.lookNow()]);
    const reports = [...a, ...b];
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ marks: 20, cleared: 20 });
    expect(reads()).toEqual({ list: 1, get: 0 });
    await sleep(10);
    expect(await s.reconcile.index.pending(batchId)).toBe(0);
  });
});
