/**
 * The shared rate limit hands out several slots per script call (one call for every request waiting
 * at once, plus a few ahead for a busy process), on a real Redis: far fewer calls than requests, and
 * still no more requests than the ceiling allows.
 */
import { createHash } from "node:crypto";
import { afterAll, describe, expect, it, vi } from "vitest";
import { createSharedRateLimiter } from "../../../src/payouts-api/index.js";
import { connectRedis } from "../../../src/pipeline/index.js";
import { luaScripts } from "../../../src/redis/index.js";
import { REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";

const redis = connectRedis(REDIS_URL, { autoPipelining: true });
const prefixes: string[] = [];
afterAll(async () => {
  for (const prefix of prefixes) await redis.del(`${prefix}:ratelimit`);
  redis.disconnect();
});

function limiter(ceilingPerSecond: number, leaseMs?: number) {
  const prefix = uniquePrefix("slots");
  prefixes.push(prefix);
  const l = createSharedRateLimiter({
    redis,
    prefix,
    ceilingPerSecond,
    ...(leaseMs !== undefined ? { leaseMs } : {}),
  });
  return { l, calls: acquireCalls() };
}

/** The limiter's script calls on the connection: EVALSHA of its source's SHA1 (the Lua loader runs it so). */
function acquireCalls() {
  const script = luaScripts().find((x) => x.name === "lua:payouts-api/rate-acquire");
  if (!script) throw new Error("the limiter's script is not loaded");
  const sha = createHash("sha1").update(script.source).digest("hex");
  const spy = vi.spyOn(redis, "evalsha");
  return {
    get count() {
      return spy.mock.calls.filter((c) => c[0] === sha).length;
    },
    mockRestore: () => spy.mockRestore(),
  };
}

describe("slots handed out in batches", () => {
  it("serves 200 requests waiting at once with a few script calls", async () => {
    const { l, calls } = limiter(100_000);
    await Promise.all(Array.from({ length: 200 }, () => l.acquire()));
    expect(calls.count).toBeGreaterThan(0);
    expect(calls.count).toBeLessThanOrEqual(5);
    calls.mockRestore();
  });

  it("never lets more requests through than the ceiling allows (plus the 100 ms burst)", async () => {
    const { l, calls } = limiter(50);
    const started = Date.now();
    // Two waves: requests waiting together, then one by one (slots taken ahead are used or dropped).
    await Promise.all(Array.from({ length: 40 }, () => l.acquire()));
    for (let i = 0; i < 20; i++) await l.acquire();
    const seconds = (Date.now() - started) / 1000;
    // 60 requests at 50/s with a 100 ms burst (5 at once) take at least 1.1 s.
    expect(seconds).toBeGreaterThanOrEqual(1.05);
    calls.mockRestore();
  });

  it("drops slots taken ahead when the service says 429", async () => {
    const { l, calls } = limiter(100_000, 1_000);
    // Use some slots so the next call takes a few ahead.
    for (let i = 0; i < 50; i++) await l.acquire();
    l.rateLimited(300);
    await new Promise((r) => setTimeout(r, 20));
    const before = calls.count;
    const started = Date.now();
    await l.acquire();
    // Asked Redis again (no slot kept from before the 429), and waited out the pause.
    expect(calls.count).toBeGreaterThan(before);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    calls.mockRestore();
  });
});
