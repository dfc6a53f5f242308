/**
 * What the sandbox counts for the people measuring a client against it: requests by kind (so a bench
 * can say "API requests per row"), 429s answered, and the evidence a storm test needs that no
 * Idempotency-Key was ever sent with two different requests. Counting is O(1) per request.
 */
import type { PaymentStatus } from "./wire.js";

/** The request kinds a client's cost per row is made of; everything else is `other`. */
export type RequestKind = "create" | "get" | "list" | "quote" | "other";

export const REQUEST_KINDS: readonly RequestKind[] = ["create", "get", "list", "quote", "other"];

/** Classifies a request by method and its path segments after `/v2` (pure). */
export function requestKind(method: string, segments: readonly string[]): RequestKind {
  const [first, second, third] = segments;
  if (first === "payments" && third === undefined) {
    if (second === undefined) {
      if (method === "POST") return "create";
      if (method === "GET") return "list";
    } else if (method === "GET") {
      return "get";
    }
  }
  if (method === "POST" && first === "tools" && second === "fx-quote" && third === undefined) return "quote";
  return "other";
}

export interface RequestCounts {
  create: number;
  get: number;
  list: number;
  quote: number;
  other: number;
  /** Sum of the kinds. */
  total: number;
  /**
   * Requests answered 429 (a rate-limit fault, or a create refused while webhook deliveries are behind),
   * included in the kinds above.
   */
  rateLimited: number;
  /** When the counters were last reset (RFC 3339). */
  since: string;
}

/** Request counters; `reset()` starts a new measurement. */
export class RequestStats {
  private counts = { create: 0, get: 0, list: 0, quote: 0, other: 0 };
  private rateLimited = 0;
  private sinceMs: number;

  constructor(private readonly now: () => number = Date.now) {
    this.sinceMs = now();
  }

  count(kind: RequestKind): void {
    this.counts[kind]++;
  }

  countRateLimited(): void {
    this.rateLimited++;
  }

  reset(): void {
    this.counts = { create: 0, get: 0, list: 0, quote: 0, other: 0 };
    this.rateLimited = 0;
    this.sinceMs = this.now();
  }

  snapshot(): RequestCounts {
    const c = this.counts;
    return {
      ...c,
      total: c.create + c.get + c.list + c.quote + c.other,
      rateLimited: this.rateLimited,
      since: new Date(this.sinceMs).toISOString(),
    };
  }
}

/** The whole `GET /v2/_sandbox/stats` answer. */
export interface SandboxStats {
  requests: RequestCounts;
  idempotency: {
    /** Distinct Idempotency-Keys ever seen with two different requests (body, route or entity). */
    keysReusedWithDifferentRequest: number;
    /** The first of those keys (at most `REUSED_KEYS_LISTED`), oldest first. */
    reusedKeys: string[];
  };
  webhooks: {
    /** Deliveries being sent now (at most one per connection to the endpoint). */
    sending: number;
    /** Deliveries waiting for a connection, oldest first (not those a fault holds back on purpose). */
    waiting: number;
  };
  payments: {
    /** Payments stored (the sandbox never deletes one). */
    stored: number;
    /** Of those, how many are in each status. */
    byStatus: Record<PaymentStatus, number>;
  };
}
