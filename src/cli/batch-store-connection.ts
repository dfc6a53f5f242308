/** The batch store on REDIS_URL, for commands that read batches (status, result); a usage error if Redis is away. */
import { BatchStore } from "../batches/index.js";
import type { AppConfig } from "../config/index.js";
import { connectRedis, type RedisClient } from "../redis/index.js";
import { redisUnreachable } from "./redis-check.js";

export async function withBatchStore<T>(
  config: AppConfig,
  prefix: string,
  use: (store: BatchStore) => Promise<T>,
): Promise<T> {
  return withRedis(config, (redis) => use(new BatchStore(redis, { prefix })));
}

/** A connection to REDIS_URL for one command (users, tokens, batches); a usage error if Redis is away. */
export async function withRedis<T>(config: AppConfig, use: (redis: RedisClient) => Promise<T>): Promise<T> {
  // Never reconnects (see connectRedis failFast): a command fails in one line rather than going on
  // against a Redis that came back without its data; the listener keeps ioredis from printing stacks.
  const redis = connectRedis(config.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true, failFast: true });
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
