/**
 * A payment worker's part in feeding batches to the queue (src/batches/batch-feeder.ts): a top-up when
 * its jobs finish, and one on a timer. Top-ups are coalesced: one at a time in a process, one more
 * when jobs finished meanwhile (at most one per FEED_GAP_MS), and a finished job's top-up waits until a
 * quarter of the window is free. The timer is the backstop: a process that died between its jobs
 * finishing and its top-up (or a submitter that stopped after giving a batch its feed) leaves a feed
 * that any worker's next tick carries on, and a worker starting up feeds at once.
 */
import type { BatchFeeder } from "../batches/index.js";
import type { LogSink } from "../logging/index.js";
import type {} from "./payment-worker.js";

/** How often every worker tops the feeds up whatever happened: the longest a feed can stand still. */
export const FEED_TICK_MS = 2_000;

/** Least time between two top-ups asked for by finished jobs (a few Redis reads each). */
const FEED_GAP_MS = 100;

export interface FeedLoop {
  /** Jobs finished: top up once a quarter of the window is free. */
  nudge(): void;
  /** Top up now if any room is free. */
  tick(): void;
  /** Stops the timer and waits for a top-up under way. */
  stop(): Promise<void>;
}

export function startFeedLoop(
  feeder: BatchFeeder,
  options: { tickMs?: number; logger?: LogSink | undefined } = {},
): FeedLoop {
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const run = (minRoom: number) => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      try {
        let room = minRoom;
        for (;;) {
          again = false;
          await feeder.topUp({ minRoom: room });
          if (!again || stopped) break;
          room = feeder.refillRoom;
          await new Promise((resolve) => setTimeout(resolve, FEED_GAP_MS));
        }
      } catch (err) {
        options.logger?.warn({ err }, "feeding batches to the queue failed; the next top-up carries on");
      } finally {
        running = undefined;
      }
    })();
  };
  const timer = setInterval(() => run(1), options.tickMs ?? FEED_TICK_MS);
  timer.unref();
  return {
    nudge: () => run(feeder.refillRoom),
    tick: () => run(1),
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
