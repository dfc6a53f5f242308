/**
 * Many small requests to Redis gathered into one call: while one call is on its way, the requests that
 * come in wait and go together in the next, at most `maxBatch` a call. When nothing is under way a
 * request goes at the end of its turn, or after `waitMs` (gathering the requests of that long into one
 * call: requests spaced a little wider than a round trip, such as webhook deliveries arriving one per
 * HTTP request, would otherwise each cost a write to Redis and its wake-up). Each caller still gets
 * its own answer, or the call's error.
 */
export function gatherCalls<T, R>(
  run: (items: readonly T[]) => Promise<readonly R[]>,
  maxBatch = 500,
  waitMs = 0,
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
      // Nothing under way: go at the end of this turn (requests of the same turn go together), or
      // once the wait gathered more.
      if (!inFlight && pending.length === 1) {
        if (waitMs > 0) setTimeout(flush, waitMs);
        else setImmediate(flush);
      }
    });
}
