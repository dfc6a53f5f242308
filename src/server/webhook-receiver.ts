/**
 * `POST /webhooks/payouts` (docs/design.md §3.5): verify the signature over the raw bytes before anything
 * else (a bad or missing one is 401 and nothing happens), then parse, deduplicate on `messageId`
 * (RedisClient `SET NX EX`, kept at least 7 days), queue a reconcile job and answer at once. The job, not
 * this handler, fetches the payment: a delivery is only a hint.
 */
import { createHash } from "node:crypto";
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
  /** Key prefix (default `payouts`): dedupe keys are `<prefix>:webhooks:seen:<messageId>`. */
  prefix: string;
  enqueuer: ReconcileEnqueuer;
  dedupeTtlSeconds?: number;
  /**
   * Longest wait for RedisClient (dedupe key, job) before answering 503, so a RedisClient outage makes the service
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
    timer = setTimeout(() => reject(new StoreTimeoutError(`RedisClient did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function dedupeKey(prefix: string, messageId: string): string {
  const id = /^[A-Za-z0-9_.-]{1,128}$/.test(messageId)
    ? messageId
    : createHash("sha256").update(messageId).digest("hex");
  return `${prefix}:webhooks:seen:${id}`;
}

export function createWebhookReceiver(options: WebhookReceiverOptions) {
  const { secret, redis, prefix, enqueuer, logger } = options;
  const ttl = options.dedupeTtlSeconds ?? DEFAULT_DEDUPE_TTL_SECONDS;
  const storeTimeoutMs = options.storeTimeoutMs ?? 3_000;
  if (!secret) throw new TypeError("createWebhookReceiver: the signing secret is empty");

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
    const key = dedupeKey(prefix, messageId);
    try {
      const first = await within(storeTimeoutMs, redis.set(key, "1", "EX", ttl, "NX"));
      if (first !== "OK") return { status: 200, outcome: "duplicate", body: { status: "duplicate" } };
    } catch (err) {
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
      await redis.del(key).catch(() => undefined);
      logger?.error({ err: (err as Error).message, messageId }, "could not queue a reconcile job");
      return { status: 503, outcome: "unavailable", body: { error: "temporarily unavailable" } };
    }
    logger?.debug?.({ event, messageId, paymentId: parsed.delivery.id }, "webhook delivery queued");
    return { status: 202, outcome: "queued", body: { status: "queued" } };
  };
}

export type WebhookReceiver = ReturnType<typeof createWebhookReceiver>;
