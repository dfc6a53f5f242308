import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { RedisUnavailableError, startPrivateRedis } from "../../../src/demo/private-redis.js";

describe("startPrivateRedis", () => {
  const savedPath = process.env.PATH;
  afterEach(() => {
    process.env.PATH = savedPath;
  });

  it("starts a redis-server on a free port with noeviction, and stops it", async () => {
    const redis = await startPrivateRedis();
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    client.on("error", () => {});
    try {
      expect(redis.url).not.toBe("redis://127.0.0.1:6379");
      expect(await client.ping()).toBe("PONG");
      expect(await client.config("GET", "maxmemory-policy")).toEqual(["maxmemory-policy", "noeviction"]);
    } finally {
      client.disconnect();
      await redis.stop();
    }
    const after = new Redis(redis.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    after.on("error", () => {});
    await expect(after.connect()).rejects.toThrow();
    after.disconnect();
  });

  it("says how to get Redis when redis-server is not on PATH", async () => {
    process.env.PATH = "/nonexistent";
    const err = await startPrivateRedis().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisUnavailableError);
    expect((err as Error).message).toContain("REDIS_URL");
    expect((err as Error).message).toContain("redis-server");
  });
});
