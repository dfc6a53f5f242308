/**
 * Every notification this tool sends to NOTIFY_URL, as a Standard Webhook (standardwebhooks.com): the
 * body is `{ "type": "<event>", "timestamp": "<ISO time>", "data": { ... } }`, and three headers let
 * the receiver verify it and refuse a replay:
 *
 *   webhook-id         the notification's id (`msg_…`), the same on every retry: receivers dedupe on it
 *   webhook-timestamp  when this try was sent (Unix seconds): receivers refuse one too old or too new
 *   webhook-signature  `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed with the bytes of
 *                      PAYOUTS_WEBHOOK_SECRET (as the `standardwebhooks` libraries take a raw secret)
 *
 * A failed try (no answer, or not 2xx) is sent again with the same id and body and a fresh timestamp
 * and signature, with the service client's backoff. docs/notifications.md shows a receiver.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Webhook } from "standardwebhooks";
import { request } from "undici";
import { backoffDelayMs, DEFAULT_NOTIFY_RETRY_OPTIONS, type RetryOptions } from "../payouts-api/index.js";

/** The Standard Webhooks headers, as sent. */
export const NOTIFY_HEADERS = {
  id: "webhook-id",
  timestamp: "webhook-timestamp",
  signature: "webhook-signature",
} as const;

export interface NotifyOptions {
  url: string;
  /** PAYOUTS_WEBHOOK_SECRET: its UTF-8 bytes are the signing key. */
  secret: string;
  /** Retries of the POST; missing fields use DEFAULT_NOTIFY_RETRY_OPTIONS (payouts-api/retry-policy.ts). */
  retry?: Partial<RetryOptions>;
  /** Time-out of one try, ms. Default 10 000. */
  timeoutMs?: number;
}

/** One notification: its event type (`batch.finished`), what it says, and its id (kept across retries). */
export interface Notification<T = unknown> {
  type: string;
  data: T;
  /** Default: a new `msg_<uuid>`. */
  id?: string;
}

/** A new notification id in the Standard Webhooks style. */
export function notificationId(): string {
  return `msg_${randomUUID().replaceAll("-", "")}`;
}

/** The signing key: the secret's bytes (never logged; the signature never reveals it). */
function signer(secret: string): Webhook {
  return new Webhook(Buffer.from(secret, "utf8").toString("base64"));
}

/** The body of a notification (pure): the same bytes on every try. */
export function notificationBody(notification: Notification, createdAt: Date = new Date()): Buffer {
  return Buffer.from(
    JSON.stringify({ type: notification.type, timestamp: createdAt.toISOString(), data: notification.data }),
  );
}

/** The three headers of one try of `body` (pure but for the clock it is given). */
export function notificationHeaders(
  id: string,
  body: Buffer,
  secret: string,
  sentAt: Date = new Date(),
): Record<string, string> {
  return {
    [NOTIFY_HEADERS.id]: id,
    [NOTIFY_HEADERS.timestamp]: String(Math.floor(sentAt.getTime() / 1000)),
    [NOTIFY_HEADERS.signature]: signer(secret).sign(id, sentAt, body),
  };
}

/**
 * POSTs a notification, trying again on a connection error or a non-2xx answer (same id and body,
 * fresh timestamp and signature). Resolves with the last status (0: no answer); never throws.
 */
export async function sendNotification(notification: Notification, options: NotifyOptions): Promise<number> {
  const id = notification.id ?? notificationId();
  const body = notificationBody(notification);
  const retry: RetryOptions = { ...DEFAULT_NOTIFY_RETRY_OPTIONS, ...options.retry };
  let lastStatus = 0;
  for (let attempt = 1; attempt <= retry.maxAttempts; attempt++) {
    try {
      const res = await request(options.url, {
        method: "POST",
        headers: { "content-type": "application/json", ...notificationHeaders(id, body, options.secret) },
        body,
        headersTimeout: options.timeoutMs ?? 10_000,
        bodyTimeout: options.timeoutMs ?? 10_000,
      });
      await res.body.dump();
      lastStatus = res.statusCode;
      if (res.statusCode >= 200 && res.statusCode < 300) return lastStatus;
    } catch {
      lastStatus = 0;
    }
    if (attempt < retry.maxAttempts) await sleep(backoffDelayMs(attempt, retry, Math.random));
  }
  return lastStatus;
}

/**
 * Verifies a notification as a receiver does (what docs/notifications.md shows, and what the tests
 * use): the raw body and the three headers, with the same secret. Throws on a bad signature or a
 * timestamp more than five minutes away; returns the parsed body.
 */
export function verifyNotification(
  rawBody: string | Buffer,
  headers: Record<string, string | string[] | undefined>,
  secret: string,
): { type: string; timestamp: string; data: unknown } {
  const pick = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? (v[0] ?? "") : (v ?? "");
  };
  return signer(secret).verify(rawBody, {
    [NOTIFY_HEADERS.id]: pick(NOTIFY_HEADERS.id),
    [NOTIFY_HEADERS.timestamp]: pick(NOTIFY_HEADERS.timestamp),
    [NOTIFY_HEADERS.signature]: pick(NOTIFY_HEADERS.signature),
  }) as { type: string; timestamp: string; data: unknown };
}
