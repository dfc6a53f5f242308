/**
 * The circuit breaker: when the rows of a batch keep being refused for one reason (a funding account
 * closed, an entity blocked, a payee that needs a document), paying the rest only fails them too. The
 * batch pauses itself, says why, and waits for an operator to resume or cancel it (stop-batch.ts).
 *
 * Only final refusals count (a row `rejected` by the service: it says something about the batch);
 * transient failures (timeouts, 5xx, rate limits) are retried under the row's key and never count,
 * nor does a row given up as `error`. The counts live in one small hash (the last refusal code, its
 * run, and the last `window` outcomes as a string of 0/1); the decision is {@link breakerVerdict},
 * pure. A refusal is counted at once, by one script. Paid rows are held in the process and counted
 * together (with the next refusal, once a window's worth is held, or after {@link PAID_FLUSH_MS}): a
 * paid row never trips the breaker, and it costs a script call per window instead of one per row.
 */
import type { BatchStore } from "../batches/index.js";
import { luaScript } from "../redis/index.js";
import { BREAKER_ACTOR, pauseBatch, StopRefusedError } from "./stop-batch.js";

export interface BreakerSettings {
  /** Trip when this many rows in a row are refused with the same code (0: never on this rule). */
  sameCode: number;
  /** How many of the latest outcomes the share rule looks at. */
  window: number;
  /** Trip when at least this many of the last `window` outcomes are refusals (0: never on this rule). */
  failures: number;
}

/**
 * Defaults (PAYOUTS_BREAKER_SAME_CODE, PAYOUTS_BREAKER_WINDOW, PAYOUTS_BREAKER_FAILURES): ten refusals
 * in a row with one code is no coincidence of ten payees, and four in five of the last fifty refused
 * is a sheet or an account gone wrong, while a few bad payees in a large batch never trip it.
 */
export const DEFAULT_BREAKER: BreakerSettings = { sameCode: 10, window: 50, failures: 40 };

/** The counts after one outcome, as the counting script returns them. */
export interface BreakerCounts {
  /** The refusal code of this outcome ('' for a paid row). */
  code: string;
  /** Refusals in a row with that code, this one included (0 for a paid row). */
  run: number;
  /** Outcomes counted in the window (at most `window`). */
  seen: number;
  /** Refusals among them. */
  failures: number;
}

export type BreakerVerdict = { trip: false } | { trip: true; reason: string };

/** Whether the batch must pause after these counts (pure). */
export function breakerVerdict(counts: BreakerCounts, settings: BreakerSettings): BreakerVerdict {
  if (settings.sameCode > 0 && counts.code !== "" && counts.run >= settings.sameCode) {
    return {
      trip: true,
      reason: `${counts.run} rows in a row were refused with ${counts.code}`,
    };
  }
  if (settings.failures > 0 && counts.seen >= settings.window && counts.failures >= settings.failures) {
    return {
      trip: true,
      reason: `${counts.failures} of the last ${counts.seen} rows were refused`,
    };
  }
  return { trip: false };
}

/** The longest a paid row waits in the process before it is counted. */
export const PAID_FLUSH_MS = 1_000;

/** Outcomes into the batch's counters: `paid` paid rows, then the refusal (if any). */
const COUNT_OUTCOME = luaScript(new URL("./lua/count-outcome.lua", import.meta.url));

export async function countOutcome(
  store: BatchStore,
  batchId: string,
  refusalCode: string | undefined,
  window: number,
  paid = 0,
): Promise<BreakerCounts> {
  const [code, run, seen, failures] = (await COUNT_OUTCOME.run(
    store.redis,
    [store.keys.breaker(batchId)],
    [refusalCode ?? "", String(Math.max(1, window)), String(paid)],
  )) as [string, number, number, number];
  return { code, run: Number(run), seen: Number(seen), failures: Number(failures) };
}

export interface BatchPausedEvent {
  batchId: string;
  reason: string;
  counts: BreakerCounts;
  by: string;
  at: string;
}

export interface Breaker {
  /** Counts one row's outcome (`paid`, or `rejected` with its code); pauses the batch when it trips. */
  observe(batchId: string, outcome: { paid: true } | { refused: string }): Promise<void>;
  /** Counts the paid rows still held (before the process stops). */
  flush(): Promise<void>;
}

/**
 * The breaker of a payment worker: `onTrip` runs once per pause it caused (to notify, audit, log);
 * a batch already paused (by an operator, or another worker's breaker) is left as it is.
 */
export function createBreaker(options: {
  store: BatchStore;
  settings: BreakerSettings;
  onTrip: (event: BatchPausedEvent) => Promise<void>;
}): Breaker {
  const { store, settings } = options;
  const disabled = settings.sameCode <= 0 && settings.failures <= 0;
  const window = Math.max(1, settings.window);
  /** Paid rows per batch, not counted yet. */
  const paidHeld = new Map<string, number>();
  let flushTimer: NodeJS.Timeout | undefined;

  function takePaid(batchId: string): number {
    const paid = paidHeld.get(batchId) ?? 0;
    paidHeld.delete(batchId);
    return paid;
  }

  async function flush(): Promise<void> {
    clearTimeout(flushTimer);
    flushTimer = undefined;
    const held = [...paidHeld.keys()];
    await Promise.all(
      held.map((batchId) => countOutcome(store, batchId, undefined, window, takePaid(batchId))),
    );
  }

  function holdPaid(batchId: string): boolean {
    const paid = (paidHeld.get(batchId) ?? 0) + 1;
    paidHeld.set(batchId, paid);
    if (paid >= window) return false;
    flushTimer ??= setTimeout(() => {
      flushTimer = undefined;
      // A count that fails is only a paid row less in the window: the breaker is a guard, not a ledger.
      flush().catch(() => undefined);
    }, PAID_FLUSH_MS).unref();
    return true;
  }

  return {
    flush,
    async observe(batchId, outcome) {
      if (disabled) return;
      const refused = "refused" in outcome ? outcome.refused : undefined;
      if (refused === undefined && holdPaid(batchId)) return;
      const counts = await countOutcome(store, batchId, refused, window, takePaid(batchId));
      const verdict = breakerVerdict(counts, settings);
      if (!verdict.trip) return;
      const at = new Date();
      let paused: boolean;
      try {
        paused = await pauseBatch(store, batchId, { by: BREAKER_ACTOR, reason: verdict.reason, at });
      } catch (err) {
        // A batch finished or canceled meanwhile has nothing left to pause.
        if (err instanceof StopRefusedError) return;
        throw err;
      }
      if (paused) {
        await options.onTrip({
          batchId,
          reason: verdict.reason,
          counts,
          by: BREAKER_ACTOR,
          at: at.toISOString(),
        });
      }
    },
  };
}
