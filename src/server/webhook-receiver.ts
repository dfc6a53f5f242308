/**
 * `POST /webhooks/payouts` (docs/design.md §3.5): verify the signature over the raw bytes before anything
 * else (a bad or missing one is 401 and nothing happens), then parse, deduplicate on `messageId`
 * (kept at least 7 days), queue a reconcile job and answer at once. The job, not this handler, fetches
 * the payment: a delivery is only a hint.
 *
 * The messageIds seen are kept in one hash per day (`<prefix>:webhooks:seen:d<day>`, expiring the
 * TTL after its day ends) instead of a key each: about 3 deliveries per payment made a key per
 * messageId cost ~270 B per row in Redis (issue 9, point 6); a hash field costs about half.
 */
import { createHash } from "node:crypto";
import { defineLuaScript, runScript } from "../batches/index.js";
import type { ReconcileEnqueuer } from "../reconcile/index.js";
import type { RedisClient } from "../redis/index.js";
import {
  isPaymentEvent,
  parseWebhookDelivery,
  verifyWebhookSignature,
  WebhookError,
} from "../webhooks/index.js";
import type { DeliveryOutcome } from "./metrics.js";

/** Seven days, the brief's minimum; the service's retry window is not shown, so err long. */
export const DEFAULT_DEDUPE_TTL_SECONDS = 7 * 24 * 3600;

export interface ReceiverLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}

export interface WebhookReceiverOptions {
  /** The signing secret (PAYOUTS_WEBHOOK_SECRET, default the API key). Never logged. */
  secret: string;
  /** A plain (non-blocking) connection for the dedupe keys. */
  redis: RedisClient;
  /** Key prefix (default `payouts`): dedupe hashes are `<prefix>:webhooks:seen:d<day>`. */
  prefix: string;
  enqueuer: ReconcileEnqueuer;
  dedupeTtlSeconds?: number;
  /**
   * Longest wait for Redis (dedupe key, job) before answering 503, so a Redis outage makes the service
   * retry later instead of holding its connection open. Default 3000 ms.
   */
  storeTimeoutMs?: number;
  logger?: ReceiverLogger;
}

export interface ReceiverAnswer {
  status: number;
  outcome: DeliveryOutcome;
  body: Record<string, unknown>;
}

class StoreTimeoutError extends Error {
  override readonly name = "StoreTimeoutError";
}

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeoutError(`Redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

const DAY_SECONDS = 86_400;

/**
 * Records messageIds in today's hash unless one of the hashes that may still hold them has them.
 * KEYS: today's hash, then the earlier days'. ARGV: when today's hash expires (unix s), then the ids.
 * Returns one number per id: 1 when it is new (an id given twice is new only the first time).
 */
const SEEN_FIRST = defineLuaScript(
  "webhookSeenFirstMany",
  `
local out = {}
for j = 2, #ARGV do
  local new = 1
  for i = 1, #KEYS do
    if redis.call('HEXISTS', KEYS[i], ARGV[j]) == 1 then new = 0 break end
  end
  if new == 1 then redis.call('HSET', KEYS[1], ARGV[j], '1') end
  out[j - 1] = new
end
redis.call('EXPIREAT', KEYS[1], ARGV[1])
return out
`,
);

/**
 * The dedupe check of many deliveries in one script call: while one call is on its way to Redis, the
 * deliveries that come in wait and go together in the next (none waits when nothing is under way).
 * Each delivery was one Redis write and read; under a burst they share one.
 */
function seenFirstGatherer(redis: RedisClient, prefix: string, ttl: number, maxBatch = 500) {
  let pending: { field: string; resolve: (first: boolean) => void; reject: (err: unknown) => void }[] = [];
  let inFlight = false;

  function flush(): void {
    if (inFlight || pending.length === 0) return;
    const batch = pending.slice(0, maxBatch);
    pending = pending.slice(batch.length);
    inFlight = true;
    const buckets = dedupeBuckets(prefix, Date.now(), ttl);
    Promise.resolve()
      .then(() =>
        runScript(redis, SEEN_FIRST, buckets.keys, [buckets.expireAt, ...batch.map((p) => p.field)]),
      )
      .then(
        (answer) => {
          const firsts = answer as number[];
          for (const [i, p] of batch.entries()) p.resolve(Number(firsts[i]) === 1);
        },
        (err: unknown) => {
          for (const p of batch) p.reject(err);
        },
      )
      .finally(() => {
        inFlight = false;
        flush();
      });
  }

  return (field: string): Promise<boolean> =>
    new Promise((resolve, reject) => {
      pending.push({ field, resolve, reject });
      if (!inFlight && pending.length === 1) setImmediate(flush);
    });
}

/** The day hashes a messageId seen within `ttl` seconds of `nowMs` may be in, today's first. */
export function dedupeBuckets(
  prefix: string,
  nowMs: number,
  ttl: number,
): { keys: string[]; expireAt: number } {
  const today = Math.floor(nowMs / 1000 / DAY_SECONDS);
  const back = Math.ceil(ttl / DAY_SECONDS);
  const keys = Array.from({ length: back + 1 }, (_, i) => `${prefix}:webhooks:seen:d${today - i}`);
  return { keys, expireAt: (today + 1) * DAY_SECONDS + ttl };
}

function dedupeField(messageId: string): string {
  return /^[A-Za-z0-9_.-]{1,128}$/.test(messageId)
    ? messageId
    : createHash("sha256").update(messageId).digest("hex");
}

export function createWebhookReceiver(options: WebhookReceiverOptions) {
  const { secret, redis, prefix, enqueuer, logger } = options;
  const ttl = options.dedupeTtlSeconds ?? DEFAULT_DEDUPE_TTL_SECONDS;
  const storeTimeoutMs = options.storeTimeoutMs ?? 3_000;
  if (!secret) throw new TypeError("createWebhookReceiver: the signing secret is empty");
  const seenFirst = seenFirstGatherer(redis, prefix, ttl);
  /**
   * Forgets a recorded messageId so the service's retry of a delivery we answered 503 is not taken for
   * a duplicate (it was recorded in today's hash, or in yesterday's if its check went out before
   * midnight: forget it in both).
   */
  const forget = async (field: string): Promise<void> => {
    const { keys } = dedupeBuckets(prefix, Date.now(), ttl);
    await Promise.all(keys.slice(0, 2).map((key) => redis.hdel(key, field).catch(() => undefined)));
  };

  /** Handles one delivery's raw bytes and signature header; never throws. */
  return async function receive(
    rawBody: Buffer,
    signature: string | string[] | undefined,
  ): Promise<ReceiverAnswer> {
    try {
      verifyWebhookSignature(rawBody, signature, secret);
    } catch (err) {
      if (err instanceof WebhookError) {
        logger?.warn({ code: err.code }, "webhook delivery refused: bad or missing signature");
        return { status: 401, outcome: "unauthorized", body: { error: "invalid signature" } };
      }
      throw err;
    }
    let parsed: ReturnType<typeof parseWebhookDelivery>;
    try {
      parsed = parseWebhookDelivery(rawBody);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      logger?.warn({ error: message }, "signed webhook delivery could not be read");
      return { status: 400, outcome: "invalid", body: { error: message } };
    }
    const messageId = parsed.known ? parsed.delivery.messageId : parsed.messageId;
    const event = parsed.known ? parsed.delivery.event : parsed.event;
    const field = dedupeField(messageId);
    const check = seenFirst(field);
    try {
      const first = await within(storeTimeoutMs, check);
      if (!first) return { status: 200, outcome: "duplicate", body: { status: "duplicate" } };
    } catch (err) {
      // Answered 503, so the service sends it again: if the check still lands later and records the id,
      // forget it then, or the retry would be taken for a duplicate and the delivery lost.
      if (err instanceof StoreTimeoutError)
        void check.then(
          async (first) => {
            if (first) await forget(field);
          },
          () => undefined,
        );
      logger?.error({ err: (err as Error).message }, "webhook dedupe store unavailable");
      return { status: 503, outcome: "unavailable", body: { error: "temporarily unavailable" } };
    }
    if (!parsed.known || !isPaymentEvent(event)) {
      // Account and limitation events: intake reads accounts and limitations live for every sheet and
      // caches nothing across sheets, so there is nothing to refresh; they are logged and acknowledged.
      logger?.info(
        { event, messageId, id: parsed.known ? parsed.delivery.id : undefined },
        "webhook event noted",
      );
      return { status: 200, outcome: "ignored", body: { status: "noted" } };
    }
    try {
      await within(
        storeTimeoutMs,
        enqueuer.enqueue({
          kind: "payment",
          paymentId: parsed.delivery.id,
          origin: "webhook",
          event,
          messageId,
        }),
      );
    } catch (err) {
      // Forget the delivery so the service's retry is not taken for a duplicate.
      await forget(field);
      logger?.error({ err: (err as Error).message, messageId }, "could not queue a reconcile job");
      return { status: 503, outcome: "unavailable", body: { error: "temporarily unavailable" } };
    }
    logger?.debug?.({ event, messageId, paymentId: parsed.delivery.id }, "webhook delivery queued");
    return { status: 202, outcome: "queued", body: { status: "queued" } };
  };
}

export type WebhookReceiver = ReturnType<typeof createWebhookReceiver>;
