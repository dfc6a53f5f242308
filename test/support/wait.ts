import { setTimeout as sleep } from "node:timers/promises";

/**
 * Polls `probe` until it returns a value (not undefined); fails naming `what` after `ms`. Tests run on
 * shared, loaded machines: callers give generous deadlines and assert on what they waited for.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  ms = 20_000,
  everyMs = 200,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}
