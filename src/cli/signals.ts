/**
 * How a command stops: on SIGINT/SIGTERM, and when its standard output is closed under it (`payouts
 * status | head -1`). Long-running commands wait on `untilShutdownSignal` and stop in order; a second
 * signal, or a stop that overruns its grace, ends the process at once with one line.
 */
import { EXIT } from "./exit-codes.js";

/** Why a command was asked to stop: a signal, or its output was closed (EPIPE). */
export type ShutdownReason = NodeJS.Signals | "EPIPE";

/** Listeners installed by `untilShutdownSignal` that no signal has ended yet. */
const listening = new Set<(reason: ShutdownReason) => void>();

/** The exit code of a process ended by a signal, by the shell's convention (128 + its number). */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (signal === "SIGINT" ? 2 : signal === "SIGTERM" ? 15 : 1);
}

export interface ShutdownOptions {
  /**
   * How long the stop may take once asked for: past it the process exits with one line (a stuck
   * connection or file must not keep it up for good). Default: no limit.
   */
  graceMs?: number;
}

/**
 * Resolves on the first SIGINT or SIGTERM (or a closed output), so long-running commands can shut
 * down in order. From the call on, these signals no longer kill the process, so a command calls it
 * before it starts anything: a signal that arrives during start-up then stops what has started, in
 * order, once start-up is done (by the default action it would kill the process half up, with jobs
 * locked and files half written). A second signal ends the process at once.
 */
export function untilShutdownSignal(options: ShutdownOptions = {}): Promise<ShutdownReason> {
  return new Promise((resolve) => {
    const onStop = (reason: ShutdownReason) => {
      process.off("SIGINT", onStop);
      process.off("SIGTERM", onStop);
      listening.delete(onStop);
      if (reason !== "EPIPE") exitOnSecondSignal(reason);
      if (options.graceMs !== undefined) exitAfter(options.graceMs, reason);
      resolve(reason);
    };
    listening.add(onStop);
    process.on("SIGINT", onStop);
    process.on("SIGTERM", onStop);
  });
}

/** An AbortSignal that aborts when `stop` resolves: start-up waits end on a shutdown. */
export function abortOn(stop: Promise<unknown>): AbortSignal {
  const controller = new AbortController();
  void stop.then((reason) => controller.abort(reason));
  return controller.signal;
}

/** After a first signal, the next one means "now": one line, the signal's exit code. */
function exitOnSecondSignal(first: NodeJS.Signals): void {
  const again = (signal: NodeJS.Signals) => {
    process.stderr.write(`payouts: ${signal} again while stopping after ${first}: exiting now\n`);
    process.exit(signalExitCode(signal));
  };
  process.once("SIGINT", again);
  process.once("SIGTERM", again);
}

function exitAfter(graceMs: number, reason: ShutdownReason): void {
  const timer = setTimeout(() => {
    process.stderr.write(
      `payouts: did not stop within ${Math.round(graceMs / 1000)} s of ${reason}; exiting without waiting longer\n`,
    );
    process.exit(reason === "EPIPE" ? EXIT.usage : signalExitCode(reason));
  }, graceMs);
  timer.unref();
}

/**
 * Gives SIGINT and SIGTERM back their default action. Called when a command fails: whatever may still
 * hold the process up (a reconnecting client) can then be killed as usual.
 */
export function releaseShutdownSignals(): void {
  for (const onSignal of listening) {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  listening.clear();
}

let outputClosed = false;

/** True once standard output was closed under the command: it then ends with exit 2, whatever it did. */
export function wasOutputClosed(): boolean {
  return outputClosed;
}

/**
 * Standard output closed by its reader (a pipe into `head`): without a listener the write error is an
 * uncaught exception with a stack trace. One line on stderr instead; a long-running command stops in
 * order (as on SIGTERM), any other ends at once with exit 2 (the environment took its output away).
 */
export function stopWhenOutputCloses(): void {
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (outputClosed) return;
    outputClosed = true;
    const why = err.code === "EPIPE" ? "its reader closed it (EPIPE)" : `${err.code ?? err.message}`;
    process.stderr.write(`payouts: standard output was closed before everything was written: ${why}\n`);
    process.exitCode = EXIT.usage;
    if (listening.size === 0) process.exit(EXIT.usage);
    for (const onStop of [...listening]) onStop("EPIPE");
  });
}
