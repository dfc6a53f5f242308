/**
 * Delayed work the sandbox schedules (status progression, webhook deliveries and their retries), all
 * cancelled at once on close. One Node timer serves a min-heap of due times, so scheduling is
 * O(log n) and thousands of payments a second cost no timer object each. Work due at the same time
 * runs in the order it was scheduled, as with setTimeout. The timer is unref'd: a sandbox left
 * running must never keep a test process or the CLI alive by itself.
 */
interface Entry {
  dueMs: number;
  order: number;
  fn: () => void;
}

/** At most this much due work runs in one turn before yielding to I/O. */
const MAX_PER_TURN = 2000;

function before(a: Entry, b: Entry): boolean {
  return a.dueMs < b.dueMs || (a.dueMs === b.dueMs && a.order < b.order);
}

export class SandboxTimers {
  private readonly heap: Entry[] = [];
  private order = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private timerDueMs = Number.POSITIVE_INFINITY;

  constructor(private readonly now: () => number = () => performance.now()) {}

  get closed(): boolean {
    return this.stopped;
  }

  /** Work scheduled and not yet run. */
  get pending(): number {
    return this.heap.length;
  }

  /** Runs `fn` after `ms`, unless closed before. */
  after(ms: number, fn: () => void): void {
    if (this.stopped) return;
    const entry: Entry = { dueMs: this.now() + Math.max(0, ms), order: this.order++, fn };
    this.push(entry);
    if (entry.dueMs < this.timerDueMs) this.arm();
  }

  close(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.heap.length = 0;
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    const head = this.heap[0];
    if (!head || this.stopped) {
      this.timer = undefined;
      this.timerDueMs = Number.POSITIVE_INFINITY;
      return;
    }
    this.timerDueMs = head.dueMs;
    this.timer = setTimeout(() => this.fire(), Math.max(0, head.dueMs - this.now()));
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.timerDueMs = Number.POSITIVE_INFINITY;
    const now = this.now();
    for (let n = 0; n < MAX_PER_TURN && !this.stopped; n++) {
      const head = this.heap[0];
      if (!head || head.dueMs > now) break;
      this.pop();
      try {
        head.fn();
      } catch (err) {
        // As with setTimeout, a throwing callback is an uncaught error; the other work still runs.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
    this.arm();
  }

  private push(entry: Entry): void {
    const heap = this.heap;
    let i = heap.length;
    heap.push(entry);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent] as Entry;
      if (!before(entry, p)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = entry;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop() as Entry;
    if (heap.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= heap.length) break;
      const r = l + 1;
      const child = r < heap.length && before(heap[r] as Entry, heap[l] as Entry) ? r : l;
      if (!before(heap[child] as Entry, last)) break;
      heap[i] = heap[child] as Entry;
      i = child;
    }
    heap[i] = last;
  }
}
