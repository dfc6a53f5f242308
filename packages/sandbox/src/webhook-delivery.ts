/**
 * Delivers events to the partner's webhook endpoint: signed JSON POSTs, retried with exponential
 * backoff on a non-2xx answer or a connection error, the same messageId on every attempt.
 */
import { createHmac } from "node:crypto";
import { Agent, request } from "undici";
import { type FaultConfig, SHUFFLE_MAX_DELAY_MS } from "./faults.js";
import type { EmittedEvent, SandboxState } from "./state.js";
import { SandboxTimers } from "./timers.js";
import type { WebhookDelivery } from "./wire.js";

export interface WebhookRetryConfig {
  /** Total attempts per delivery, the first included. */
  attempts: number;
  /** Delay before the second attempt; doubles each time. */
  baseDelayMs: number;
}

export const DEFAULT_WEBHOOK_RETRY: WebhookRetryConfig = { attempts: 5, baseDelayMs: 500 };
/**
 * Deliveries waiting for the endpoint beyond which the sandbox refuses new payments with 429, as a
 * service protects its webhook pipeline: each payment brings three deliveries, so when the endpoint
 * (or the sandbox's own single thread, sharing a machine with its client) falls behind, accepting
 * payments faster only grows the backlog, and with it the sandbox's heap and its GC, until everything
 * slows down (bench:e2e at 1M rows: 400,000 deliveries waiting, the sandbox at 700 MB). 20,000
 * deliveries are a few seconds of work and a few MB; a client that adapts its rate to 429s settles
 * at what the deliveries keep up with.
 */
export const DEFAULT_WEBHOOK_BACKLOG_LIMIT = 20_000;
const ATTEMPT_TIMEOUT_MS = 5000;
/** Connections to the endpoint; more deliveries wait in the agent's queue (keep-alive, no per-POST handshake). */
const DELIVERY_CONNECTIONS = 32;

export function signWebhookBody(secret: string, rawBody: Buffer): string {
  return createHmac("sha256", secret).update(rawBody).digest("hex");
}

interface Logger {
  warn(obj: object, msg?: string): void;
}

/** A retry waiting for a connection (a first attempt waits as the bare delivery). */
class Retry {
  constructor(
    readonly delivery: WebhookDelivery,
    readonly attempt: number,
  ) {}
}

export class WebhookDeliverer {
  private readonly timers = new SandboxTimers();
  private readonly inFlight = new Set<AbortController>();
  private readonly agent = new Agent({ connections: DELIVERY_CONNECTIONS, keepAliveTimeout: 10_000 });
  private closed = false;
  private active = 0;
  /**
   * Attempts waiting for one of the connections, FIFO. A first attempt is the delivery itself (no
   * wrapper, no timer, no closure), so a backlog of deliveries costs little more than the deliveries.
   */
  private waiting: (WebhookDelivery | Retry)[] = [];
  private waitingHead = 0;
  /** The turn that starts the waiting first attempts, once per turn however many events came. */
  private drain: NodeJS.Immediate | undefined;

  constructor(
    private readonly state: SandboxState,
    private readonly retry: WebhookRetryConfig,
    private readonly faults: () => FaultConfig,
    private readonly logger?: Logger,
  ) {}

  /**
   * Deliveries under way and waiting for a connection (first attempts and retries whose wait is
   * over): when the endpoint answers slower than events come, `waiting` grows, and so does the heap.
   */
  backlog(): { sending: number; waiting: number } {
    return { sending: this.active, waiting: this.waiting.length - this.waitingHead };
  }

  /** Called for every emitted event; sends it when the endpoint is active and subscribed. */
  handle(event: EmittedEvent): void {
    const endpoint = this.state.webhook;
    if (this.closed || !endpoint || !endpoint.isActive || !endpoint.events.includes(event.delivery.event))
      return;
    const faults = this.faults();
    const copies = faults.duplicateWebhookRate > 0 && Math.random() < faults.duplicateWebhookRate ? 2 : 1;
    for (let i = 0; i < copies; i++) {
      if (faults.shuffleWebhooks) {
        this.timers.after(Math.random() * SHUFFLE_MAX_DELAY_MS, () => this.start(event.delivery, 1));
      } else {
        // Sent from the next turn on, as a zero-delay timer would, after the answer that emitted it.
        this.waiting.push(event.delivery);
        this.drain ??= setImmediate(() => {
          this.drain = undefined;
          this.startWaiting();
        });
      }
    }
  }

  /**
   * Runs an attempt when one of the `DELIVERY_CONNECTIONS` slots is free, else queues it (FIFO), so
   * an attempt's 5 s time-out starts when it is sent, never while it waits for a connection.
   */
  private start(delivery: WebhookDelivery, attempt: number): void {
    if (this.closed) return;
    if (this.active >= DELIVERY_CONNECTIONS) {
      this.waiting.push(attempt === 1 ? delivery : new Retry(delivery, attempt));
      return;
    }
    this.active++;
    void this.attempt(delivery, attempt).finally(() => {
      this.active--;
      this.startWaiting();
    });
  }

  /** Starts waiting attempts, oldest first, while connections are free. */
  private startWaiting(): void {
    while (!this.closed && this.active < DELIVERY_CONNECTIONS) {
      const next = this.waiting[this.waitingHead];
      if (next === undefined) break;
      this.waiting[this.waitingHead] = undefined as unknown as WebhookDelivery;
      this.waitingHead++;
      if (this.waitingHead > 1024 && this.waitingHead * 2 > this.waiting.length) {
        this.waiting = this.waiting.slice(this.waitingHead);
        this.waitingHead = 0;
      }
      if (next instanceof Retry) this.start(next.delivery, next.attempt);
      else this.start(next, 1);
    }
  }

  private async attempt(delivery: WebhookDelivery, attempt: number): Promise<void> {
    const endpoint = this.state.webhook;
    // Deleting or pausing the endpoint stops pending retries too.
    if (this.closed || !endpoint || !endpoint.isActive) return;
    const raw = Buffer.from(JSON.stringify(delivery), "utf8");
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), ATTEMPT_TIMEOUT_MS);
    timeout.unref();
    this.inFlight.add(controller);
    let ok = false;
    let outcome = "";
    try {
      const res = await request(endpoint.url, {
        method: "POST",
        dispatcher: this.agent,
        headers: {
          "content-type": "application/json",
          "x-service-signature": signWebhookBody(this.state.partner.webhookSecret, raw),
          "x-service-delivery-id": delivery.messageId,
        },
        body: raw,
        signal: controller.signal,
      });
      await res.body.dump().catch(() => undefined);
      ok = res.statusCode >= 200 && res.statusCode < 300;
      outcome = `HTTP ${res.statusCode}`;
    } catch (err) {
      outcome = (err as Error).name === "AbortError" ? "timeout" : "connection error";
    } finally {
      clearTimeout(timeout);
      this.inFlight.delete(controller);
    }
    if (ok || this.closed) return;
    if (attempt >= this.retry.attempts) {
      this.logger?.warn(
        { messageId: delivery.messageId, event: delivery.event, attempts: attempt, outcome },
        "sandbox webhook delivery gave up",
      );
      return;
    }
    this.timers.after(this.retry.baseDelayMs * 2 ** (attempt - 1), () => this.start(delivery, attempt + 1));
  }

  close(): void {
    this.closed = true;
    this.timers.close();
    for (const c of this.inFlight) c.abort();
    this.inFlight.clear();
    this.waiting = [];
    this.waitingHead = 0;
    if (this.drain) clearImmediate(this.drain);
    this.drain = undefined;
    void this.agent.destroy().catch(() => undefined);
  }
}
