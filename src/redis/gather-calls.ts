/**
 * Many small requests to Redis gathered into one call: while one call is on its way, the requests that
 * come in wait and go together in the next (none waits when nothing is under way), at most `maxBatch`
 * a call. Each caller still gets its own answer, or the call's error. Under a burst (webhook
 * deliveries, each one HTTP request) this turns one script call per request into one per round trip.
 */
export function gatherCalls<T, R>(
  run: (items: readonly T[]) => Promise<readonly R[]>,
  maxBatch = 500,
): (item: T) => Promise<R> {
  let pending: { item: T; resolve: (answer: R) => void; reject: (err: unknown) => void }[] = [];
  let inFlight = false;

  function flush(): void {
    if (inFlight || pending.length === 0) return;
    const batch = pending.slice(0, maxBatch);
    pending = pending.slice(batch.length);
    inFlight = true;
    Promise.resolve()
      .then(() => run(batch.map((p) => p.item)))
      .then(
        (answers) => {
          for (const [i, p] of batch.entries()) p.resolve(answers[i] as R);
        },
        (err: unknown) => {
          for (const p of batch) p.reject(err);
        },
      )
      .finally(() => {
        inFlight = false;
        flush();
      });
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      pending.push({ item, resolve, reject });
      // Nothing under way: go at the end of this turn (requests of the same turn go together).
      if (!inFlight && pending.length === 1) setImmediate(flush);
    });
}
