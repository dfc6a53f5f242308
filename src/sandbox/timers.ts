/**
 * Delayed work the sandbox schedules (status progression, webhook deliveries and their retries), all
 * cancelled at once on close. Timers are unref'd: a sandbox left running must never keep a test
 * process or the CLI alive by itself.
 */
export class SandboxTimers {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  get closed(): boolean {
    return this.stopped;
  }

  /** Runs `fn` after `ms`, unless closed before. */
  after(ms: number, fn: () => void): void {
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  close(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
