/**
 * The reconciler's loop in each worker process: claim batches whose marks went quiet (look-index.ts),
 * read their payments a page at a time by the creation windows the marks need (look-plan.ts), apply
 * every payment on every page, then clear the marks nobody made again meanwhile. Several processes
 * share the work safely: a batch is claimed by one process at a time, every write is a forward-only
 * row change, and a clear only removes a mark unchanged since it was read.
 *
 * Every read goes through the client, so through the rate shared by all workers.
 */
import type { BatchStore } from "../batches/index.js";
import type { LogSink } from "../logging/index.js";
import type { PayoutsClient } from "../payouts-api/index.js";
import { type Claim, type DueMark, LOOSE_BATCH, type LookIndex } from "./look-index.js";
import {
  type CreationWindow,
  creationWindows,
  type LookPlan,
  PAGE_SIZE,
  planLook,
  secondsToCount,
} from "./look-plan.js";
import type { ReconcileProcessor } from "./reconcile-processor.js";

/**
 * How long a row's marks must have been quiet (no new delivery) before its look: a payment's
 * in-progress and final deliveries (and its created one, when subscribed) often come within seconds,
 * and one read after the last of them tells as much as all. Counted from the LAST delivery so far, not
 * the first: then the wait only has to outlast the gap between two deliveries (3 s in the sandbox,
 * in-progress to final), whatever the lag before them; a wait counted from `api.payment.created` had
 * to outlast the whole settlement, which the sandbox takes longer for when it is busy. Only latency is
 * traded, a delivery is never dropped; the sweep remains the backstop for deliveries that never come.
 */
export const DEFAULT_RECONCILE_DEBOUNCE_MS = 5_000;

/**
 * The quiet time of a batch with no row left to send: its marks are its last payments settling, few,
 * and the batch is finished only once they are read. Reading them sooner costs a few pages read
 * twice (a payment still in progress is read again once final) and saves most of the wait at the end
 * of every batch.
 */
export const DEFAULT_DRAINING_QUIET_MS = 1_000;

export interface LookRunnerOptions {
  store: BatchStore;
  index: LookIndex;
  client: PayoutsClient;
  processor: Pick<ReconcileProcessor, "applyPayments" | "reconcilePayment">;
  logger?: LogSink | undefined;
  /** Quiet time before a mark is looked at. Default {@link DEFAULT_RECONCILE_DEBOUNCE_MS}. */
  quietMs?: number;
  /** Quiet time in a batch with no row left to send. Default {@link DEFAULT_DRAINING_QUIET_MS}. */
  drainingQuietMs?: number;
  /** How often this process asks for batches to look at. Default 250 ms. */
  tickMs?: number;
  /** Batches looked at at once by this process. Default 4. */
  batchesAtOnce?: number;
  /** Window reads at once within one batch's look. Default 2. */
  readsAtOnce?: number;
  /** Marks read from a batch at a time. Default 2000. */
  chunk?: number;
  /** A claim's lease: another process may take the batch if this one is silent that long. Default 60 s. */
  leaseMs?: number;
  /** After a failed look, the batch is tried again this much later. Default 5 s. */
  retryAfterMs?: number;
}

/** What one look did, for logs and tests. */
export interface LookReport {
  batchId: string;
  marks: number;
  /** Marks that needed no read. */
  settled: number;
  windows: number;
  /** `GET /payments` pages read. */
  pages: number;
  /** `GET /payments/{id}` reads. */
  gets: number;
  /** Marks cleared (the others were made again meanwhile). */
  cleared: number;
}

export interface LookRunner {
  /** Starts the periodic claims. */
  start(): void;
  /** One round now: claim what is due and look at it (tests; the loop does the same). */
  runOnce(): Promise<LookReport[]>;
  /** Stops claiming; waits for the looks under way. */
  stop(): Promise<void>;
  /** Reads and applies pages of payments matching `params` (the sweep's watch and the audit share it). */
  readPages(params: Parameters<PayoutsClient["payments"]["listPages"]>[0]): Promise<number>;
}

/** Runs `work` over `items`, at most `limit` at once. */
async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(runners);
}

/** A window's bounds as list filters: inclusive, and wide enough for a `createdAt` finer than a ms. */
function windowQuery(batchId: string, window: CreationWindow) {
  return {
    metadata: { payouts_batch: batchId },
    createdGte: new Date(window.fromMs).toISOString(),
    createdLte: new Date(window.toMs + 1).toISOString(),
    limit: PAGE_SIZE,
  };
}

/**
 * The look runner: claims due batches, reads their payments a page at a time and applies them. Kept as
 * one closure on purpose: the claim, the page reads and the marks left for the next look share the
 * runner's in-flight state and its stop, which separate objects would have to pass back and forth.
 */
export function createLookRunner(options: LookRunnerOptions): LookRunner {
  const { store, index, client, processor, logger } = options;
  const quietMs = options.quietMs ?? DEFAULT_RECONCILE_DEBOUNCE_MS;
  const drainingQuietMs = Math.min(options.drainingQuietMs ?? DEFAULT_DRAINING_QUIET_MS, quietMs);
  const tickMs = options.tickMs ?? 250;
  const batchesAtOnce = options.batchesAtOnce ?? 4;
  const readsAtOnce = options.readsAtOnce ?? 2;
  const chunk = options.chunk ?? 2000;
  const leaseMs = options.leaseMs ?? 60_000;
  const retryAfterMs = options.retryAfterMs ?? 5_000;
  const running = new Set<Promise<unknown>>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let ticking = false;

  async function readPages(params: Parameters<PayoutsClient["payments"]["listPages"]>[0]): Promise<number> {
    let pages = 0;
    for await (const page of client.payments.listPages(params)) {
      pages++;
      await processor.applyPayments(page);
    }
    return pages;
  }

  /** Reads one payment by id and applies it; a payment the service does not know is only logged. */
  async function readOne(paymentId: string): Promise<void> {
    const result = await processor.reconcilePayment(paymentId);
    if (result.outcome === "not-found") {
      logger?.warn({ paymentId }, "a delivery named a payment the service does not know");
    }
  }

  /** One chunk of a batch's due marks: plan, read, apply. Returns what it read. */
  async function lookAt(batchId: string, marks: readonly DueMark[], report: LookReport): Promise<void> {
    if (batchId === LOOSE_BATCH) {
      await eachLimited(marks, readsAtOnce, async (m) => {
        report.gets++;
        await readOne(m.member);
      });
      return;
    }
    const heads = await store.rowHeads(
      batchId,
      marks.map((m) => m.member),
    );
    const plan: LookPlan = planLook(marks, heads);
    report.settled += plan.settled.length;
    const perSecond = await index.createdPerSecond(batchId, secondsToCount(plan.placed));
    const windows = creationWindows(plan.placed, perSecond);
    report.windows += windows.length;
    const seen = new Set<string>();
    await eachLimited(windows, readsAtOnce, async (window) => {
      for await (const page of client.payments.listPages(windowQuery(batchId, window))) {
        report.pages++;
        for (const p of page) seen.add(p.id);
        await processor.applyPayments(page);
      }
    });
    // A placed row whose payment no window showed (its metadata edited, a clock the service moved):
    // read alone, so no mark is cleared without its payment having been looked at.
    const unseen = plan.placed.filter((r) => !seen.has(r.paymentId)).map((r) => r.paymentId);
    const singles = [...plan.singles.map((s) => s.paymentId), ...unseen];
    await eachLimited(singles, readsAtOnce, async (paymentId) => {
      report.gets++;
      await readOne(paymentId);
    });
  }

  async function look(claim: Claim): Promise<LookReport> {
    const report: LookReport = {
      batchId: claim.batchId,
      marks: 0,
      settled: 0,
      windows: 0,
      pages: 0,
      gets: 0,
      cleared: 0,
    };
    try {
      let nowMs = claim.nowMs;
      const quiet = claim.draining ? drainingQuietMs : quietMs;
      for (;;) {
        const marks = await index.dueMarks(claim.batchId, nowMs - quiet, chunk);
        if (marks.length === 0) break;
        report.marks += marks.length;
        await lookAt(claim.batchId, marks, report);
        report.cleared += await index.clear(claim.batchId, marks);
        if (marks.length < chunk || stopped) break;
        if (!(await index.renew(claim, leaseMs))) return report;
        nowMs = claim.nowMs;
      }
      await index.finish(claim);
    } catch (err) {
      logger?.warn(
        { batchId: claim.batchId, err },
        "reconcile look failed; the batch is looked at again shortly",
      );
      const now = await index.redisTimeMs().catch(() => Date.now());
      // Due again (its marks untouched) once `retryAfterMs` passed: a mark time that old plus the quiet.
      await index.finish(claim, now + retryAfterMs - quietMs).catch(() => undefined);
    }
    if (report.marks > 0) logger?.info({ ...report }, "reconcile look");
    return report;
  }

  /** Claims what is due, as many batches as this process has room for, and starts their looks. */
  async function claimAndStart(): Promise<Promise<LookReport>[]> {
    const free = batchesAtOnce - running.size;
    if (stopped || free <= 0) return [];
    const claims = await index.claim(quietMs, leaseMs, free, drainingQuietMs);
    return claims.map((claim) => {
      const task = look(claim);
      running.add(task);
      void task.finally(() => running.delete(task));
      return task;
    });
  }

  async function runOnce(): Promise<LookReport[]> {
    return Promise.all(await claimAndStart());
  }

  function tick(): void {
    if (ticking || stopped) return;
    ticking = true;
    claimAndStart()
      .catch((err: unknown) => logger?.warn({ err }, "reconcile claim failed"))
      .finally(() => {
        ticking = false;
      });
  }

  return {
    start() {
      if (timer || stopped) return;
      timer = setInterval(tick, tickMs);
      timer.unref();
    },
    runOnce,
    readPages,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      await Promise.all(running);
    },
  };
}
