/**
 * A request rate shared by every process on one Redis, that adapts to what the service allows
 * (issue 9, point 7). The service limits requests, not payments, so every request the client sends
 * (create, get, list, quote, ...) takes a slot.
 *
 * - **Ceiling**: `PAYOUTS_RATE_LIMIT_PER_SECOND`, for all workers together: one GCRA schedule (the
 *   theoretical arrival time of the next request) in one Redis hash, advanced by a Lua script, so two
 *   processes never take the same slot. Times are Redis's clock, so processes on several machines agree.
 * - **Multiplicative decrease**: a 429 halves the rate, or brings it down to what the service accepted
 *   in the last full second sending, if that is lower (at most once a second, however many requests of
 *   one burst got it); everybody waits out the `Retry-After`.
 * - **Additive increase**: each quiet second (no 429) the rate climbs by 5% (at least 1/s), back up to
 *   the ceiling.
 *
 * The state expires after an hour idle, so a new run starts at the ceiling.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { RedisClient } from "../redis/index.js";

/** What the request function needs from a limiter. */
export interface RequestLimiter {
  /** Resolves when this process may send one request (never rejects but on `signal`). */
  acquire(signal?: AbortSignal): Promise<void>;
  /** The service answered 429: slow everybody down and pause for `retryAfterMs` (default 1 s). */
  rateLimited(retryAfterMs: number | undefined): void;
}

export interface SharedRateLimiterOptions {
  /** A plain (non-blocking) connection; not closed by the limiter. */
  redis: RedisClient;
  /** Key prefix of the installation: the state is `<prefix>:ratelimit`. */
  prefix: string;
  /** The ceiling, requests per second across all processes. */
  ceilingPerSecond: number;
  /** Lowest rate the decrease goes to. Default 1/s. */
  minPerSecond?: number;
  /** Requests that may go at once before the schedule spaces them (burst), in ms of the rate. Default 100. */
  burstMs?: number;
  /** Called when Redis fails: the request then goes without waiting (the service still says 429). */
  onError?: (err: unknown) => void;
}

export interface SharedRateLimiter extends RequestLimiter {
  /** The current shared rate (requests per second). */
  currentRate(): Promise<number>;
}

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** Keeps the per-second window (accepted requests this second and the last) current. */
const WINDOW = `
local sec = math.floor(now / 1000)
local win = tonumber(redis.call('HGET', KEYS[1], 'win')) or sec
if win ~= sec then
  local cnt = tonumber(redis.call('HGET', KEYS[1], 'cnt')) or 0
  local rej = tonumber(redis.call('HGET', KEYS[1], 'rej')) or 0
  local prev = cnt - rej
  redis.call('HSET', KEYS[1], 'win', sec, 'cnt', 0, 'rej', 0)
  -- What the service accepted in the last second anyone sent (a second spent paused says nothing).
  if prev > 0 then redis.call('HSET', KEYS[1], 'lastOk', prev) end
end
`;

/**
 * KEYS: state. ARGV: ceiling, min, burst ms. Returns 0 (go) or the ms to wait before asking again.
 */
const ACQUIRE = `${NOW}${WINDOW}
local ceiling = tonumber(ARGV[1])
local st = redis.call('HMGET', KEYS[1], 'rate', 'tat', 'pausedUntil', 'changedAt')
local rate = tonumber(st[1]) or ceiling
local tat = tonumber(st[2]) or now
local paused = tonumber(st[3]) or 0
local changed = tonumber(st[4]) or now
if rate > ceiling then rate = ceiling end
if now < paused then return paused - now end
if rate < ceiling and now - changed >= 1000 then
  rate = math.min(ceiling, rate + math.max(1, math.ceil(rate * 0.05)))
  changed = now
end
if tat < now then tat = now end
local burst = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'rate', rate, 'changedAt', changed)
redis.call('PEXPIRE', KEYS[1], 3600000)
if tat - now > burst then return math.ceil(tat - now - burst) end
redis.call('HSET', KEYS[1], 'tat', tat + 1000 / rate)
redis.call('HINCRBY', KEYS[1], 'cnt', 1)
return 0
`;

/** KEYS: state. ARGV: ceiling, min, retry-after ms. Returns the new rate. */
const RATE_LIMITED = `${NOW}${WINDOW}
local ceiling = tonumber(ARGV[1])
local minRate = tonumber(ARGV[2])
local st = redis.call('HMGET', KEYS[1], 'rate', 'decreasedAt', 'pausedUntil', 'lastOk', 'tat')
local rate = tonumber(st[1]) or ceiling
local decreased = tonumber(st[2]) or 0
local paused = tonumber(st[3]) or 0
local lastOk = tonumber(st[4]) or 0
local tat = tonumber(st[5]) or now
redis.call('HINCRBY', KEYS[1], 'rej', 1)
if now - decreased >= 1000 then
  local next = math.floor(rate / 2)
  if lastOk > 0 and lastOk < next then next = lastOk end
  rate = math.max(minRate, next)
  redis.call('HSET', KEYS[1], 'rate', rate, 'decreasedAt', now, 'changedAt', now)
end
local untilMs = now + tonumber(ARGV[3])
if untilMs > paused then redis.call('HSET', KEYS[1], 'pausedUntil', untilMs) end
if tat < untilMs then redis.call('HSET', KEYS[1], 'tat', untilMs) end
redis.call('PEXPIRE', KEYS[1], 3600000)
return rate
`;

export function createSharedRateLimiter(options: SharedRateLimiterOptions): SharedRateLimiter {
  const { redis } = options;
  const key = `${options.prefix}:ratelimit`;
  const ceiling = String(options.ceilingPerSecond);
  const min = String(Math.min(options.minPerSecond ?? 1, options.ceilingPerSecond));
  const burst = String(options.burstMs ?? 100);
  const acquireCmd = "payoutsRateAcquire";
  const limitedCmd = "payoutsRateLimited";
  // defineCommand: EVALSHA with a fallback to EVAL, per connection.
  const commands = redis as unknown as Record<string, (...args: unknown[]) => Promise<number>>;
  if (!commands[acquireCmd]) redis.defineCommand(acquireCmd, { numberOfKeys: 1, lua: ACQUIRE });
  if (!commands[limitedCmd]) redis.defineCommand(limitedCmd, { numberOfKeys: 1, lua: RATE_LIMITED });

  return {
    async acquire(signal) {
      for (;;) {
        let waitMs: number;
        try {
          waitMs = Number(await commands[acquireCmd]!(key, ceiling, min, burst));
        } catch (err) {
          options.onError?.(err);
          return;
        }
        if (waitMs <= 0) return;
        // A little jitter, so waiting processes do not all ask again in the same millisecond.
        await sleep(waitMs + Math.floor(Math.random() * 5), undefined, signal ? { signal } : {});
      }
    },
    rateLimited(retryAfterMs) {
      const wait = String(Math.max(1, Math.round(retryAfterMs ?? 1000)));
      commands[limitedCmd]!(key, ceiling, min, wait).catch((err: unknown) => options.onError?.(err));
    },
    async currentRate() {
      const rate = await redis.hget(key, "rate");
      return rate === null ? options.ceilingPerSecond : Number(rate);
    },
  };
}
