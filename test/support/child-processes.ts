/**
 * Child processes the tests start (CLI processes, private redis-servers), tracked so that none outlives
 * its test file: ./reap-children.ts (a vitest set-up file) stops whatever is still running when a file
 * ends, and the worker process kills the rest if it exits first (a test that timed out).
 */
import type { ChildProcess } from "node:child_process";

// One registry per test worker process, whichever module instance registers or reaps.
const KEY = Symbol.for("payouts.test.children");
type Registry = Set<ChildProcess>;

function registry(): Registry {
  const holder = globalThis as unknown as Record<symbol, Registry | undefined>;
  let children = holder[KEY];
  if (!children) {
    children = new Set();
    holder[KEY] = children;
    // Last resort: the worker itself is going away (a time-out, a crash); exit handlers must be synchronous.
    process.once("exit", () => {
      for (const child of children!) if (running(child)) child.kill("SIGKILL");
    });
  }
  return children;
}

/** Registers a child so it is stopped if the test forgets to (or fails before it can). */
export function trackChild<T extends ChildProcess>(child: T): T {
  const children = registry();
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** How long a child still running when its test file ends gets to exit before it counts as left behind. */
const SETTLE_MS = 2_000;

function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/**
 * Stops every tracked child still running: SIGTERM, then SIGKILL after `graceMs`. Returns what it had
 * to stop (command lines), so the caller can say so.
 */
export async function stopLeftoverChildren(graceMs = 5_000): Promise<string[]> {
  // A child the test has just signalled (SIGKILL in its own clean-up) may not have been reaped yet:
  // give every running child a moment to end on its own before calling it left behind.
  const ending = [...registry()].filter(running);
  if (ending.length > 0) {
    await Promise.race([
      Promise.all(ending.map((child) => new Promise((resolve) => child.once("exit", resolve)))),
      new Promise((resolve) => setTimeout(resolve, SETTLE_MS)),
    ]);
  }
  const left = [...registry()].filter(running);
  await Promise.all(
    left.map(
      (child) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
          child.once("exit", () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill("SIGTERM");
        }),
    ),
  );
  return left.map((child) => `${child.spawnargs.join(" ")} (pid ${child.pid})`);
}
