/** Listeners installed by `untilShutdownSignal` that no signal has ended yet. */
const listening = new Set<(signal: NodeJS.Signals) => void>();

/**
 * Resolves on the first SIGINT or SIGTERM, so long-running commands can shut down in order. From the
 * call on, these signals no longer kill the process, so a command calls it before it starts anything:
 * a signal that arrives during start-up then stops what has started, in order, once start-up is done
 * (by the default action it would kill the process half up, with jobs locked and files half written).
 */
export function untilShutdownSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      listening.delete(onSignal);
      resolve(signal);
    };
    listening.add(onSignal);
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
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
