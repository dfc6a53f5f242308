/**
 * A request rate shared by every process on one Redis, that adapts to what the service allows.
 * The service limits requests, not payments, so every request the client sends
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
 *
 * One script call hands out several slots at once: every request of this process waiting for one,
 * plus a few more for what this process used in the last `leaseMs` (so a busy worker asks Redis a few
 * dozen times a second, not once per request). Slots not used within `leaseMs` are dropped, never
 * saved up, and a 429 drops them at once: the rate over any window stays what the schedule allowed.
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
  /**
   * How long slots taken ahead stay usable, and how much of this process's recent use is taken ahead
   * (its requests of the last second × leaseMs / 1000). Default 50 ms; 0 takes one slot per request.
   */
  leaseMs?: number;
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
 * KEYS: state. ARGV: ceiling, min, burst ms, slots wanted. Returns {0, slots granted (1 to wanted)} or
 * {ms to wait before asking again, 0}. Slots go only as far as the burst allows, as one by one would.
 */
const ACQUIRE = `${NOW}${WINDOW}
local ceiling = tonumber(ARGV[1])
local st = redis.call('HMGET', KEYS[1], 'rate', 'tat', 'pausedUntil', 'changedAt')
local rate = tonumber(st[1]) or ceiling
local tat = tonumber(st[2]) or now
local paused = tonumber(st[3]) or 0
local changed = tonumber(st[4]) or now
if rate > ceiling then rate = ceiling end
if now < paused then return {paused - now, 0} end
if rate < ceiling and now - changed >= 1000 then
  rate = math.min(ceiling, rate + math.max(1, math.ceil(rate * 0.05)))
  changed = now
end
if tat < now then tat = now end
local burst = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'rate', rate, 'changedAt', changed)
redis.call('PEXPIRE', KEYS[1], 3600000)
if tat - now > burst then return {math.ceil(tat - now - burst), 0} end
local want = tonumber(ARGV[4]) or 1
local n = math.max(1, math.min(want, math.floor((now + burst - tat) * rate / 1000) + 1))
redis.call('HSET', KEYS[1], 'tat', tat + n * 1000 / rate)
redis.call('HINCRBY', KEYS[1], 'cnt', n)
return {0, n}
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

export const DEFAULT_LEASE_MS = 50;
/** At most this many slots are taken ahead in one call. */
const MAX_AHEAD = 64;

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

  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  /** Slots granted and not used yet, usable until `slotsUntil` (Date.now ms). */
  let slots = 0;
  let slotsUntil = 0;
  /** Requests of this process in the current and the previous second (sizes the slots taken ahead). */
  let usedSecond = 0;
  let usedThisSecond = 0;
  let usedLastSecond = 0;
  const waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }> = [];
  let asking = false;

  const use = (now: number): void => {
    const second = Math.floor(now / 1000);
    if (second !== usedSecond) {
      usedLastSecond = second === usedSecond + 1 ? usedThisSecond : 0;
      usedThisSecond = 0;
      usedSecond = second;
    }
    usedThisSecond++;
  };

  const takeSlot = (): boolean => {
    const now = Date.now();
    if (slots > 0 && now < slotsUntil) {
      slots--;
      use(now);
      return true;
    }
    slots = 0;
    return false;
  };

  /** One script call at a time, for every waiting request (and a few ahead). */
  async function ask(): Promise<void> {
    if (asking || waiters.length === 0) return;
    asking = true;
    try {
      for (;;) {
        while (waiters.length > 0 && takeSlot()) waiters.shift()!.resolve();
        if (waiters.length === 0) return;
        const ahead = leaseMs > 0 ? Math.min(MAX_AHEAD, Math.ceil((usedLastSecond * leaseMs) / 1000)) : 0;
        let answer: unknown;
        try {
          answer = await commands[acquireCmd]!(key, ceiling, min, burst, waiters.length + ahead);
        } catch (err) {
          options.onError?.(err);
          // Redis is out: these requests go without waiting (the service still says 429).
          for (const w of waiters.splice(0)) w.resolve();
          return;
        }
        const [waitMs = 0, granted = 0] = Array.isArray(answer) ? answer.map(Number) : [Number(answer), 0];
        if (granted > 0) {
          slots = granted;
          slotsUntil = Date.now() + Math.max(leaseMs, 1);
          continue;
        }
        // A little jitter, so waiting processes do not all ask again in the same millisecond.
        await sleep(Math.max(1, waitMs || 0) + Math.floor(Math.random() * 5));
      }
    } catch (err) {
      // Never leave a request waiting on a limiter that broke: it goes (the service still says 429).
      options.onError?.(err);
      for (const w of waiters.splice(0)) w.resolve();
    } finally {
      asking = false;
    }
  }

  return {
    acquire(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (waiters.length === 0 && takeSlot()) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const waiter = {
          resolve: () => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
          },
          reject,
        };
        const onAbort = () => {
          const i = waiters.indexOf(waiter);
          if (i >= 0) waiters.splice(i, 1);
          reject(signal?.reason);
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        waiters.push(waiter);
        void ask();
      });
    },
    rateLimited(retryAfterMs) {
      // Slots taken ahead were counted before the service said no: drop them, ask again after the pause.
      slots = 0;
      const wait = String(Math.max(1, Math.round(retryAfterMs ?? 1000)));
      commands[limitedCmd]!(key, ceiling, min, wait).catch((err: unknown) => options.onError?.(err));
    },
    async currentRate() {
      const rate = await redis.hget(key, "rate");
      return rate === null ? options.ceilingPerSecond : Number(rate);
    },
  };
}
