/**
 * The `rateLimitPerSecond` fault: a token bucket over every API request (the real service limits
 * requests, not payments). The bucket holds at most one second of tokens, so a client may burst up to
 * the rate and is then held to it. A request that finds the bucket empty is answered 429 with
 * `Retry-After` in whole seconds until a token is back (at least 1, as HTTP has no smaller unit).
 */
export type RateDecision = { ok: true } | { ok: false; retryAfterSeconds: number };

export class TokenBucket {
  private tokens = 0;
  private lastMs = 0;
  private rate = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Takes one token at `perSecond` (0 = unlimited). A new rate starts with a full bucket. */
  take(perSecond: number): RateDecision {
    if (perSecond <= 0) return { ok: true };
    const now = this.now();
    const capacity = Math.max(1, perSecond);
    if (perSecond !== this.rate) {
      this.rate = perSecond;
      this.tokens = capacity;
    } else {
      this.tokens = Math.min(capacity, this.tokens + ((now - this.lastMs) / 1000) * perSecond);
    }
    this.lastMs = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - this.tokens) / perSecond)) };
  }
}
