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
import { luaScript, type RedisClient } from "../redis/index.js";

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

/** The shared rate's scripts (./lua/, each file saying its KEYS and ARGV). */
const ACQUIRE = luaScript(new URL("./lua/rate-acquire.lua", import.meta.url));
const RATE_LIMITED = luaScript(new URL("./lua/rate-limited.lua", import.meta.url));

export const DEFAULT_LEASE_MS = 50;
/** At most this many slots are taken ahead in one call. */
const MAX_AHEAD = 64;

export function createSharedRateLimiter(options: SharedRateLimiterOptions): SharedRateLimiter {
  const { redis } = options;
  const key = `${options.prefix}:ratelimit`;
  const ceiling = String(options.ceilingPerSecond);
  const min = String(Math.min(options.minPerSecond ?? 1, options.ceilingPerSecond));
  const burst = String(options.burstMs ?? 100);

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
          answer = await ACQUIRE.run(redis, [key], [ceiling, min, burst, waiters.length + ahead]);
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
      RATE_LIMITED.run(redis, [key], [ceiling, min, wait]).catch((err: unknown) => options.onError?.(err));
    },
    async currentRate() {
      const rate = await redis.hget(key, "rate");
      return rate === null ? options.ceilingPerSecond : Number(rate);
    },
  };
}
