/**
 * `POST /webhooks/payouts` (docs/design.md §3.5): verify the signature over the raw bytes before anything
 * else (a bad or missing one is 401 and nothing happens), then parse, deduplicate on `messageId`
 * (kept at least 7 days), mark the payment's row as needing a look (its batch and row come from the
 * payment's metadata the delivery carries; src/reconcile) and answer at once. The reconciler, not
 * this handler, reads the payment, a page of the batch's payments at a time: a delivery is only a
 * hint.
 *
 * The messageIds seen are kept in small hashes per day (webhook-dedupe.ts), expiring the TTL after
 * their day ends: with two or three deliveries per payment, a key (or a hash field) per messageId would
 * cost more Redis per row than the row itself; a digest in a listpack-sized bucket costs a fraction.
 */

import { PayoutsError } from "../errors/index.js";
import type { LogSink } from "../logging/index.js";
import type { LookRequest, ReconcileEnqueuer } from "../reconcile/index.js";
import { gatherCalls, type RedisClient } from "../redis/index.js";
import {
  isPaymentEvent,
  parseWebhookDelivery,
  verifyWebhookSignature,
  WebhookError,
} from "../webhooks/index.js";
import type { DeliveryOutcome } from "./metrics.js";
import { createDedupeStore, type DedupeId, dedupeId } from "./webhook-dedupe.js";

/**
 * How long a delivery waits for the deliveries right behind it to share one Redis call (its dedupe
 * and its mark): deliveries come one per HTTP request, a little further apart than a Redis round trip,
 * so without a wait each cost a write to Redis and a wake-up of it. A few ms on the answer.
 */
export const DEFAULT_GATHER_MS = 4;

/** Seven days, the brief's minimum; the service's retry window is not shown, so err long. */
export const DEFAULT_DEDUPE_TTL_SECONDS = 7 * 24 * 3600;

export interface WebhookReceiverOptions {
  /** The signing secret (PAYOUTS_WEBHOOK_SECRET, default the API key). Never logged. */
  secret: string;
  /** A plain (non-blocking) connection for the dedupe keys. */
  redis: RedisClient;
  /** Key prefix (default `payouts`): dedupe keys start `<prefix>:webhooks:seen:d<day>`. */
  prefix: string;
  enqueuer: ReconcileEnqueuer;
  dedupeTtlSeconds?: number;
  /** How long a delivery waits for others to share its Redis call. Default {@link DEFAULT_GATHER_MS}. */
  gatherMs?: number;
  /**
   * Longest wait for Redis (dedupe key, mark) before answering 503, so a Redis outage makes the service
   * retry later instead of holding its connection open. Default 3000 ms.
   */
  storeTimeoutMs?: number;
  logger?: LogSink;
}

export interface ReceiverAnswer {
  status: number;
  outcome: DeliveryOutcome;
  body: Record<string, unknown>;
}

class StoreTimeoutError extends PayoutsError {
  override readonly name = "StoreTimeoutError";
  constructor(message: string) {
    super("REDIS_TIMEOUT", message, { kind: "unavailable" });
  }
}

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeoutError(`Redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export function createWebhookReceiver(options: WebhookReceiverOptions) {
  const { secret, redis, prefix, enqueuer, logger } = options;
  const ttl = options.dedupeTtlSeconds ?? DEFAULT_DEDUPE_TTL_SECONDS;
  const storeTimeoutMs = options.storeTimeoutMs ?? 3_000;
  if (!secret) throw new TypeError("createWebhookReceiver: the signing secret is empty");
  const dedupe = createDedupeStore(redis, prefix, ttl);
  // The dedupe checks of the deliveries that arrive during a round trip in one script call, and their
  // payments' marks in another sent with it (one write to Redis, one round trip): a payment event is
  // marked even when its dedupe finds a duplicate, which only delays its row's look by the quiet time.
  const checkAndMark = gatherCalls(
    async (items: readonly { id: DedupeId; mark?: LookRequest | undefined }[]) => {
      const marks = items.flatMap((i) => (i.mark ? [i.mark] : []));
      const [firsts] = await Promise.all([
        dedupe.seenFirst(items.map((i) => i.id)),
        marks.length > 0 ? enqueuer.enqueueMany(marks) : undefined,
      ]);
      return firsts;
    },
    500,
    options.gatherMs ?? DEFAULT_GATHER_MS,
  );
  /**
   * Forgets a recorded messageId so the service's retry of a delivery we answered 503 is not taken for
   * a duplicate (recorded today, or yesterday if its check went out before midnight: the store looks
   * in both).
   */
  const forget = async (id: DedupeId): Promise<void> => {
    await dedupe.forget(id).catch(() => undefined);
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
    const id = dedupeId(messageId);
    const payment = parsed.known && isPaymentEvent(event) ? parsed.delivery : undefined;
    const check = checkAndMark({
      id,
      mark: payment && {
        kind: "payment",
        paymentId: payment.id,
        origin: "webhook",
        event,
        messageId,
        metadata: payment.metadata,
        occurredAt: payment.occurredAt,
      },
    });
    try {
      const first = await within(storeTimeoutMs, check);
      if (!first) return { status: 200, outcome: "duplicate", body: { status: "duplicate" } };
    } catch (err) {
      // Answered 503, so the service sends it again: the id is forgotten (once the check has landed,
      // when it was late), or the retry would be taken for a duplicate and the delivery lost.
      if (err instanceof StoreTimeoutError)
        void check.then(
          () => forget(id),
          () => forget(id),
        );
      else await forget(id);
      logger?.error({ err }, "webhook dedupe or mark store unavailable");
      return { status: 503, outcome: "unavailable", body: { error: "temporarily unavailable" } };
    }
    if (!payment) {
      // Account and limitation events: intake reads accounts and limitations live for every sheet and
      // caches nothing across sheets, so there is nothing to refresh; they are logged and acknowledged.
      logger?.info(
        { event, messageId, id: parsed.known ? parsed.delivery.id : undefined },
        "webhook event noted",
      );
      return { status: 200, outcome: "ignored", body: { status: "noted" } };
    }
    logger?.debug?.({ event, messageId, paymentId: payment.id }, "webhook delivery marked its row");
    return { status: 202, outcome: "queued", body: { status: "queued" } };
  };
}

export type WebhookReceiver = ReturnType<typeof createWebhookReceiver>;
