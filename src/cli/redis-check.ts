/**
 * "Does Redis answer?", asked before a command starts work that needs it, so an unreachable Redis is
 * one line and exit 2 at once rather than a process that waits (or reconnects) for good.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { checkLayoutVersion, connectRedis, LayoutVersionError, type RedisTarget } from "../redis/index.js";
import { CliError, EXIT } from "./exit-codes.js";

/**
 * How long a long-running command (worker, serve, watch) waits at start for a Redis that does not
 * answer yet (one started beside it may need a few seconds) before it gives up with exit 2.
 */
export const REDIS_START_WAIT_MS = 10_000;

/** REDIS_URL as it may be shown: a password in it is masked. */
export function shownRedisUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//***@");
}

/** The one line (exit 2) of a command that cannot reach Redis at `url` for the reason `problem`. */
export function redisUnreachable(url: string, problem: string): CliError {
  return new CliError(
    `cannot reach Redis at REDIS_URL=${shownRedisUrl(url)} (${problem}): start Redis there, or set REDIS_URL to one that runs`,
    EXIT.usage,
  );
}

/** Why Redis at `target` does not answer a PING, or undefined when it does. One try, no reconnects. */
export async function redisProblem(target: string | RedisTarget): Promise<string | undefined> {
  const redis = connectRedis(target, { lazyConnect: true, failFast: true, maxRetriesPerRequest: 0 });
  let cause: string | undefined;
  redis.on("error", (err: NodeJS.ErrnoException) => {
    cause ??= err.code ?? err.message;
  });
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (err) {
    return cause ?? (err instanceof Error ? err.message : String(err));
  } finally {
    redis.disconnect();
  }
}

/**
 * Resolves once Redis answers and holds the layout this version reads under `prefix`; after `waitMs`
 * of asking (every half second) a CliError (exit 2) in one line: where it looked, why it failed, what
 * to do. `signal` ends the wait early (a shutdown).
 */
export async function requireRedis(
  target: RedisTarget,
  options: { prefix: string; waitMs?: number; signal?: AbortSignal; onWait?: (problem: string) => void },
): Promise<void> {
  const deadline = Date.now() + (options.waitMs ?? 0);
  let told = false;
  for (;;) {
    const problem = await redisProblem(target);
    if (problem === undefined) return requireLayout(target, options.prefix);
    if (Date.now() >= deadline || options.signal?.aborted) throw redisUnreachable(target.redisUrl, problem);
    if (!told) options.onWait?.(problem);
    told = true;
    await sleep(500);
  }
}

/** The store's layout check (src/redis/layout-version.ts) as a command's one line and exit 2. */
async function requireLayout(target: RedisTarget, prefix: string): Promise<void> {
  const redis = connectRedis(target, { lazyConnect: true, failFast: true, maxRetriesPerRequest: 1 });
  redis.on("error", () => {});
  try {
    await redis.connect();
    await checkLayoutVersion(redis, prefix);
  } catch (err) {
    // Anything else (out of memory, a lost connection) is told by the command's own failure line.
    if (err instanceof LayoutVersionError) throw new CliError(err.message, EXIT.usage);
    throw err;
  } finally {
    redis.disconnect();
  }
}
