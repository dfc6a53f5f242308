import { setTimeout as sleep } from "node:timers/promises";

/**
 * Polls `probe` until it returns a value (not undefined or false); fails naming `what` after `ms`.
 * Tests run on shared, loaded machines: callers give generous deadlines and assert on what they
 * waited for. The one polling helper of the tests.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 20_000,
  everyMs = 200,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}
