/**
 * The typed client of the Partner Payouts Service: `createPayoutsClient(options)` returns resource
 * groups (`accounts`, `payments`, `tools`, ...) over one request function that handles headers,
 * retries with the same Idempotency-Key and body, response validation and secret scrubbing.
 */
import { randomUUID } from "node:crypto";
import { Agent } from "undici";
import { packageVersion } from "../assets/index.js";
import type { LogSink } from "../logging/index.js";
import { createRequester, type RequestHooks } from "./request.js";
import { accountLinksResource } from "./resources/account-links.js";
import { accountsResource } from "./resources/accounts.js";
import { attachmentsResource } from "./resources/attachments.js";
import { beneficialOwnersResource, entitiesResource } from "./resources/entities.js";
import { limitationsResource } from "./resources/limitations.js";
import { paymentsResource } from "./resources/payments.js";
import type { ResourceContext } from "./resources/resource-context.js";
import { toolsResource } from "./resources/tools.js";
import { webhookResource } from "./resources/webhook-endpoint.js";
import { DEFAULT_RETRY_OPTIONS, type RetryOptions, requestWindowMs } from "./retry-policy.js";
import type { RequestLimiter } from "./shared-rate-limit.js";

export interface PayoutsClientOptions {
  /** Service base URL including its `/v2` segment, e.g. `https://api.example.com/v2`. Required. */
  baseUrl: string;
  /** Raw API key, sent as the `api-key` header. Required. Never logged nor put in errors. */
  apiKey: string;
  /** `Service-Entity-Id` on entity-scoped endpoints: `ent_...` or `me` (PAYOUTS_ENTITY_ID). */
  entityId: string;
  /**
   * Per-try limit for the response headers and for each gap in the body (undici). Default
   * {@link DEFAULT_TIMEOUT_MS}, which is PAYOUTS_API_TIMEOUT_MS's default too.
   */
  timeoutMs?: number;
  /** Retry settings; missing fields use {@link DEFAULT_RETRY_OPTIONS}. `{ maxAttempts: 1 }` disables. */
  retry?: Partial<RetryOptions>;
  /** Receives one `debug` line per try (method, path, status, attempt, duration). */
  logger?: LogSink;
  /** Hooks per try, e.g. for metrics. */
  hooks?: RequestHooks;
  /** `User-Agent` header. Default `payouts/<version> node/<version>`. */
  userAgent?: string;
  /** Random source of the backoff jitter, [0, 1). For tests. */
  random?: () => number;
  /** Paces every request, e.g. the rate shared by all workers (createSharedRateLimiter). */
  limiter?: RequestLimiter;
}

/** A request's time-out when none is given: PAYOUTS_API_TIMEOUT_MS's default (src/config reads it from here). */
export const DEFAULT_TIMEOUT_MS = 15_000;
/** How long an idle keep-alive connection is kept for the next request. */
const KEEP_ALIVE_MS = 30_000;

export function createPayoutsClient(options: PayoutsClientOptions) {
  if (!options.baseUrl) throw new TypeError("createPayoutsClient: baseUrl is required");
  if (!options.apiKey) throw new TypeError("createPayoutsClient: apiKey is required");
  const baseUrl = new URL(options.baseUrl).toString();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // The client's own keep-alive connections: `close()` destroys them, ending calls in flight.
  const dispatcher = new Agent({
    keepAliveTimeout: KEEP_ALIVE_MS,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: { timeout: timeoutMs },
  });
  const entityId = options.entityId;

  const retry = { ...DEFAULT_RETRY_OPTIONS, ...options.retry };
  const requester = createRequester({
    baseUrl,
    apiKey: options.apiKey,
    entityId,
    timeoutMs,
    retry,
    userAgent: options.userAgent ?? `payouts/${packageVersion()} node/${process.version}`,
    dispatcher,
    logger: options.logger,
    hooks: options.hooks,
    random: options.random,
    limiter: options.limiter,
  });
  const ctx: ResourceContext = { requester, entityId, newIdempotencyKey: randomUUID };

  return {
    /** The entity this client acts for (`Service-Entity-Id`). */
    entityId,
    /**
     * How long after a call starts its request may still reach the service, with this client's own
     * time-out and retries (see requestWindowMs): what the payment processor records as a send's window.
     */
    requestWindowMs: requestWindowMs(timeoutMs, retry),
    accounts: accountsResource(ctx),
    payments: paymentsResource(ctx),
    tools: toolsResource(ctx),
    limitations: limitationsResource(ctx),
    beneficialOwners: beneficialOwnersResource(ctx),
    entities: entitiesResource(ctx),
    attachments: attachmentsResource(ctx),
    accountLinks: accountLinksResource(ctx),
    webhook: webhookResource(ctx),
    /** Aborts in-flight calls and backoff waits and closes the client's connections. Idempotent. */
    close: () => requester.close(),
  };
}

export type PayoutsClient = ReturnType<typeof createPayoutsClient>;
