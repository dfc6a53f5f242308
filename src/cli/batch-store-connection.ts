/** The batch store on REDIS_URL, for commands that read batches (status, result); a usage error if Redis is away. */
import { BatchStore } from "../batches/index.js";
import type { AppConfig } from "../config/index.js";
import { checkLayoutVersion, connectRedis, LayoutVersionError, type RedisClient } from "../redis/index.js";
import { CliError, EXIT } from "./exit-codes.js";
import { redisUnreachable } from "./redis-check.js";

export async function withBatchStore<T>(
  config: AppConfig,
  prefix: string,
  use: (store: BatchStore) => Promise<T>,
): Promise<T> {
  return withRedis(config, prefix, (redis) => use(new BatchStore(redis, { prefix })));
}

/**
 * A connection to REDIS_URL for one command (users, tokens, batches); a usage error if Redis is away
 * or holds another layout under `prefix` (src/redis/layout-version.ts).
 */
export async function withRedis<T>(
  config: AppConfig,
  prefix: string,
  use: (redis: RedisClient) => Promise<T>,
): Promise<T> {
  return withRedisOfAnyLayout(config, async (redis) => {
    await checkLayoutVersion(redis, prefix).catch((err: unknown) => {
      throw err instanceof LayoutVersionError ? new CliError(err.message, EXIT.usage) : err;
    });
    return use(redis);
  });
}

/** {@link withRedis} without the layout check: for `payouts migrate`, which moves the layout. */
export async function withRedisOfAnyLayout<T>(
  config: AppConfig,
  use: (redis: RedisClient) => Promise<T>,
): Promise<T> {
  // Never reconnects (see connectRedis failFast): a command fails in one line rather than going on
  // against a Redis that came back without its data; the listener keeps ioredis from printing stacks.
  const redis = connectRedis(config, { maxRetriesPerRequest: 1, lazyConnect: true, failFast: true });
  let cause: string | undefined;
  redis.on("error", (err: NodeJS.ErrnoException) => {
    cause ??= err.code ?? err.message;
  });
  try {
    await redis.connect().catch((err: Error) => {
      throw redisUnreachable(config.redisUrl, cause ?? err.message);
    });
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}
