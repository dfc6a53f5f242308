/**
 * Fault injection: what the sandbox does wrong on purpose so clients can prove their retry and
 * deduplication logic. Random rates for demos, counters for deterministic tests, and a real request-rate
 * limit (`rateLimitPerSecond`) for showing an adaptive client against it.
 */
import type { TokenBucket } from "./rate-limit.js";

export interface FaultConfig {
  /** Added before every response: a fixed delay or a uniform random one in [min, max] ms. */
  latencyMs: number | [number, number];
  /** Share (0..1) of requests answered 503 `service_unavailable_error` before anything is done. */
  errorRate5xx: number;
  /** Share (0..1) of requests answered 429 `rate_limit_error` with `Retry-After: 1`. */
  rateLimitRate: number;
  /** Requests per second allowed over all API requests (token bucket, one second of burst); 0 = no limit. */
  rateLimitPerSecond: number;
  /** Share (0..1) of successful `POST /payments` whose connection is destroyed after the payment is stored. */
  dropAfterStoreRate: number;
  /** Share (0..1) of webhook deliveries sent twice (same messageId). */
  duplicateWebhookRate: number;
  /** Delay each webhook delivery randomly (0 to 250 ms) so they arrive out of order. */
  shuffleWebhooks: boolean;
  /** Deterministic: answer the next N requests 503. */
  failNextRequests: number;
  /** Deterministic: answer the next N requests 429. */
  rateLimitNextRequests: number;
  /** Deterministic: store the next N created payments, then drop the connection without a response. */
  dropNextPaymentResponses: number;
}

export const NO_FAULTS: Readonly<FaultConfig> = {
  latencyMs: 0,
  errorRate5xx: 0,
  rateLimitRate: 0,
  rateLimitPerSecond: 0,
  dropAfterStoreRate: 0,
  duplicateWebhookRate: 0,
  shuffleWebhooks: false,
  failNextRequests: 0,
  rateLimitNextRequests: 0,
  dropNextPaymentResponses: 0,
};

export const SHUFFLE_MAX_DELAY_MS = 250;

function rate(name: string, v: unknown): number {
  if (typeof v !== "number" || !(v >= 0 && v <= 1))
    throw new RangeError(`${name} must be a number from 0 to 1`);
  return v;
}

function count(name: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0)
    throw new RangeError(`${name} must be a non-negative integer`);
  return v;
}

/** Merges a partial config into `base`, checking every value (throws RangeError naming the field). */
export function mergeFaults(base: FaultConfig, patch: Partial<FaultConfig>): FaultConfig {
  const next = { ...base };
  for (const [key, value] of Object.entries(patch) as [keyof FaultConfig, unknown][]) {
    if (value === undefined) continue;
    switch (key) {
      case "latencyMs":
        if (
          !(typeof value === "number" && value >= 0) &&
          !(
            Array.isArray(value) &&
            value.length === 2 &&
            value.every((n) => typeof n === "number" && n >= 0) &&
            value[0] <= value[1]
          )
        ) {
          throw new RangeError("latencyMs must be a non-negative number or [min, max]");
        }
        next.latencyMs = value as FaultConfig["latencyMs"];
        break;
      case "errorRate5xx":
      case "rateLimitRate":
      case "dropAfterStoreRate":
      case "duplicateWebhookRate":
        next[key] = rate(key, value);
        break;
      case "rateLimitPerSecond":
        if (typeof value !== "number" || !Number.isFinite(value) || value < 0)
          throw new RangeError("rateLimitPerSecond must be a non-negative number (0 = no limit)");
        next.rateLimitPerSecond = value;
        break;
      case "shuffleWebhooks":
        if (typeof value !== "boolean") throw new RangeError("shuffleWebhooks must be a boolean");
        next.shuffleWebhooks = value;
        break;
      case "failNextRequests":
      case "rateLimitNextRequests":
      case "dropNextPaymentResponses":
        next[key] = count(key, value);
        break;
      default:
        throw new RangeError(`unknown fault option ${String(key)}`);
    }
  }
  return next;
}

/** Delay to add before a response under `faults`. */
export function latencyFor(faults: FaultConfig, random: () => number = Math.random): number {
  const l = faults.latencyMs;
  if (typeof l === "number") return l;
  return l[0] + random() * (l[1] - l[0]);
}

/** A request-level fault: 503, or 429 with the `Retry-After` seconds to send. */
export type RequestFault = { status: 503 } | { status: 429; retryAfterSeconds: number };

/**
 * Decides the request-level fault for one request, consuming a deterministic counter if one is set.
 * `bucket` enforces `rateLimitPerSecond`; a request refused by another fault takes no token.
 */
export function requestFault(
  faults: FaultConfig,
  random: () => number = Math.random,
  bucket?: TokenBucket,
): RequestFault | undefined {
  if (faults.failNextRequests > 0) {
    faults.failNextRequests--;
    return { status: 503 };
  }
  if (faults.rateLimitNextRequests > 0) {
    faults.rateLimitNextRequests--;
    return { status: 429, retryAfterSeconds: 1 };
  }
  if (faults.errorRate5xx > 0 && random() < faults.errorRate5xx) return { status: 503 };
  if (faults.rateLimitRate > 0 && random() < faults.rateLimitRate)
    return { status: 429, retryAfterSeconds: 1 };
  if (bucket && faults.rateLimitPerSecond > 0) {
    const decision = bucket.take(faults.rateLimitPerSecond);
    if (!decision.ok) return { status: 429, retryAfterSeconds: decision.retryAfterSeconds };
  }
  return undefined;
}

/** Whether to drop the response of a just-stored payment, consuming the deterministic counter first. */
export function shouldDropPaymentResponse(faults: FaultConfig, random: () => number = Math.random): boolean {
  if (faults.dropNextPaymentResponses > 0) {
    faults.dropNextPaymentResponses--;
    return true;
  }
  return faults.dropAfterStoreRate > 0 && random() < faults.dropAfterStoreRate;
}
