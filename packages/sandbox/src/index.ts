/**
 * The Partner Payouts **sandbox**: an in-memory simulation of the Partner Payouts Service
 * (shared/spec/partner-payouts-api.md) for tests, demos and `payouts sandbox`. Never a real service:
 * its API key is public and nothing it does moves money.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type FaultConfig, mergeFaults, NO_FAULTS } from "./faults.js";
import { requestFingerprint } from "./idempotency.js";
import { createPayment } from "./payments.js";
import { DEFAULT_CLOCK, PaymentProgression } from "./progression.js";
import { TokenBucket } from "./rate-limit.js";
import { loadDefaultSeed, parseSeed, type SandboxSeed } from "./seed.js";
import { createRequestHandler } from "./server.js";
import { SandboxState } from "./state.js";
import { RequestStats, type SandboxStats } from "./stats.js";
import { DEFAULT_FX_QUOTE_TTL_MS } from "./tools.js";
import {
  DEFAULT_WEBHOOK_BACKLOG_LIMIT,
  DEFAULT_WEBHOOK_RETRY,
  WebhookDeliverer,
} from "./webhook-delivery.js";
import type { Payment } from "./wire.js";

export { VERIFY_AFTER_METADATA_KEY } from "./accounts.js";
export type { FaultConfig } from "./faults.js";
export { NO_FAULTS } from "./faults.js";
export { FX_RATES, priceForeignAmount } from "./fx.js";
/** The pure rule set of a payment payload, for tests that compare the client's reading with this one. */
export { checkPaymentRules } from "./payments.js";
export {
  ELIGIBILITY_LIMITS,
  FAST_INELIGIBLE_METADATA_KEY,
  outcomeForAmount,
  RAIL_FEES_USD,
} from "./rules.js";
export {
  loadDefaultSeed,
  loadRestrictedSeed,
  loadSeed,
  parseSeed,
  type SandboxSeed,
} from "./seed.js";
export { mintSonarToken, verifySonarToken } from "./sonar.js";
export { SandboxState } from "./state.js";
export type { RequestCounts, RequestKind, SandboxStats } from "./stats.js";
export { signWebhookBody } from "./webhook-delivery.js";

export interface SandboxLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface SandboxOptions {
  /** Port to listen on; default 0 (an ephemeral port). */
  port?: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Seed data; default `loadDefaultSeed()` (samples/sandbox-seed.json). */
  seed?: SandboxSeed;
  /**
   * Status progression delays: scheduled → in-progress after `toInProgressMs` (default 1500), then
   * final after `toFinalMs` (default 3000); a payment with the return trigger amount is returned
   * `toReturnMs` (default 3000) after it completed.
   */
  clock?: Partial<{ toInProgressMs: number; toFinalMs: number; toReturnMs: number }>;
  /** Initial fault injection (default: none). */
  faults?: Partial<FaultConfig>;
  /** Webhook retries: total `attempts` (default 5), first retry after `baseDelayMs` (default 500), doubling. */
  webhookRetry?: Partial<{ attempts: number; baseDelayMs: number }>;
  /** FX quote token lifetime; default 5 minutes. */
  fxQuoteTtlMs?: number;
  /** How long idempotency keys are remembered; default 24 hours. */
  idempotencyTtlMs?: number;
  /**
   * Webhook deliveries waiting for the endpoint beyond which new payments are refused with 429
   * (default {@link DEFAULT_WEBHOOK_BACKLOG_LIMIT}; 0 = never). See server.ts `shedLoad`.
   */
  webhookBacklogLimit?: number;
  /** Optional logger; receives one line at start and warnings (never a secret). */
  logger?: SandboxLogger;
}

export interface RunningSandbox {
  /** Base URL ending in /v2. */
  url: string;
  port: number;
  /** The seed's sandbox-only API key (not a secret). */
  apiKey: string;
  /** The first seeded entity's id. */
  entityId: string;
  /** Always true: marks this as the simulated service. */
  sandbox: true;
  state: SandboxState;
  setFaults(f: Partial<FaultConfig>): void;
  /** Requests by kind, 429s, Idempotency-Key reuse evidence and payments stored (as `GET /_sandbox/stats`). */
  stats(): SandboxStats;
  /**
   * `POST /payments` without HTTP, for seeding a large store fast (benchmarks): the same rules,
   * idempotency record, progression and events, for the first entity. Throws the ApiError the
   * service would answer, or an Error when the key is already used.
   */
  createPayment(body: unknown, idempotencyKey: string): Payment;
  /** Starts the request counters again (as `DELETE /_sandbox/stats`); reuse evidence is never reset. */
  resetStats(): void;
  close(): Promise<void>;
}

/** Starts the sandbox server; resolves once it is listening. */
export async function startSandbox(opts: SandboxOptions = {}): Promise<RunningSandbox> {
  const seed = parseSeed(opts.seed ?? (await loadDefaultSeed()));
  const state = new SandboxState(seed, Date.now, opts.idempotencyTtlMs);
  let faults: FaultConfig = mergeFaults({ ...NO_FAULTS }, opts.faults ?? {});
  const setFaults = (patch: Partial<FaultConfig>): FaultConfig => {
    faults = mergeFaults(faults, patch);
    return faults;
  };
  const requestStats = new RequestStats();
  const snapshot = (): SandboxStats => {
    const reuse = state.idempotency.reuseEvidence();
    return {
      requests: requestStats.snapshot(),
      idempotency: { keysReusedWithDifferentRequest: reuse.count, reusedKeys: reuse.keys },
      webhooks: deliverer.backlog(),
      payments: { stored: state.payments.size, byStatus: state.payments.countByStatus() },
    };
  };
  const progression = new PaymentProgression(state, { ...DEFAULT_CLOCK, ...opts.clock });
  const deliverer = new WebhookDeliverer(
    state,
    { ...DEFAULT_WEBHOOK_RETRY, ...opts.webhookRetry },
    () => faults,
    opts.logger,
  );
  const unsubscribe = state.onEvent((e) => deliverer.handle(e));
  let baseUrl = "";
  const server = createServer(
    createRequestHandler({
      state,
      faults: () => faults,
      setFaults,
      progression,
      fxQuoteTtlMs: opts.fxQuoteTtlMs ?? DEFAULT_FX_QUOTE_TTL_MS,
      baseUrl: () => baseUrl,
      stats: requestStats,
      snapshot,
      bucket: new TokenBucket(),
      webhookBacklog: () => deliverer.backlog().waiting,
      webhookBacklogLimit: opts.webhookBacklogLimit ?? DEFAULT_WEBHOOK_BACKLOG_LIMIT,
      ...(opts.logger ? { logger: opts.logger } : {}),
    }),
  );
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://${host.includes(":") ? `[${host}]` : host}:${port}/v2`;
  const firstEntity = seed.entities[0];
  if (!firstEntity) throw new Error("sandbox seed has no entity");
  opts.logger?.info(
    { url: baseUrl, entityId: firstEntity.id, sandbox: true },
    "SANDBOX Partner Payouts Service listening (simulated, in-memory; no real money moves)",
  );
  let closing: Promise<void> | undefined;
  return {
    url: baseUrl,
    port,
    apiKey: seed.partner.apiKey,
    entityId: firstEntity.id,
    sandbox: true,
    state,
    setFaults: (f) => {
      setFaults(f);
    },
    stats: snapshot,
    createPayment: (body, idempotencyKey) => {
      const apiKey = seed.partner.apiKey;
      const entityId = firstEntity.id;
      const fingerprint = requestFingerprint({ route: "POST /payments", entityId, body });
      const claim = state.idempotency.claim(apiKey, idempotencyKey, fingerprint);
      if (claim.kind !== "claimed") throw new Error(`Idempotency-Key ${idempotencyKey} is already used`);
      try {
        const stored = createPayment(state, entityId, body, { onCreated: (s) => progression.track(s) });
        state.idempotency.complete(apiKey, idempotencyKey, 201, stored);
        return stored.toPayment();
      } catch (err) {
        state.idempotency.release(apiKey, idempotencyKey);
        throw err;
      }
    },
    resetStats: () => requestStats.reset(),
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        unsubscribe();
        progression.close();
        deliverer.close();
        state.idempotency.sweep();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
