/**
 * The sandbox HTTP layer (node:http, no framework): body reading, fault injection, authentication,
 * entity resolution, idempotency, routing and the error envelope. Business rules live in the modules
 * it calls.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { AccountLinkRequest, EVENT_TYPES, HEADERS, IDEMPOTENCY_KEY_MAX } from "../payouts-api/wire-types.js";
import { createAccount, deleteAccount, listAccounts, storedAccountOf, updateAccount } from "./accounts.js";
import {
  createAttachment,
  createEntity,
  deleteEntity,
  entityOf,
  limitationsOf,
  listEntities,
  listOwners,
  replaceOwners,
  updateEntity,
} from "./entities.js";
import {
  ApiError,
  badRequest,
  forbidden,
  notFound,
  parseOrThrow,
  unauthorized,
  validationError,
} from "./errors.js";
import { type FaultConfig, latencyFor, requestFault, shouldDropPaymentResponse } from "./faults.js";
import { requestFingerprint } from "./idempotency.js";
import { newId } from "./ids.js";
import { parseListQuery } from "./pagination.js";
import { createPayment, listPayments, paymentOf, updatePayment } from "./payments.js";
import type { PaymentProgression } from "./progression.js";
import type { TokenBucket } from "./rate-limit.js";
import { mintSonarToken, verifySonarToken } from "./sonar.js";
import type { SandboxState } from "./state.js";
import { type RequestStats, requestKind, type SandboxStats } from "./stats.js";
import { deliveryEstimate, fastPaymentEligibilityTool, feeCalculator, fxQuote } from "./tools.js";
import { deleteWebhook, getWebhook, patchWebhook } from "./webhook-endpoint.js";

/** Bodies above this are refused: a 10 MiB attachment is about 14 MiB of base64 plus JSON. */
export const MAX_BODY_BYTES = 15 * 1024 * 1024;
export const DEFAULT_SONAR_TTL_MS = 10 * 60 * 1000;
const LINK_TTL_MS = 15 * 60 * 1000;

export interface ServerDeps {
  state: SandboxState;
  faults(): FaultConfig;
  setFaults(patch: Partial<FaultConfig>): FaultConfig;
  progression: PaymentProgression;
  fxQuoteTtlMs: number;
  baseUrl(): string;
  /** Request counters behind `GET /_sandbox/stats`. */
  stats: RequestStats;
  /** Whole-sandbox figures for `GET /_sandbox/stats`. */
  snapshot(): SandboxStats;
  /** The `rateLimitPerSecond` token bucket. */
  bucket: TokenBucket;
  logger?: { warn(obj: object, msg?: string): void };
}

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Runs after the latency fault, just before the response is written (idempotency completion). */
  beforeSend?: (reply: Reply) => void;
  /** Destroy the connection instead of answering (dropAfterStore fault). */
  drop?: boolean;
}

interface RequestContext {
  method: string;
  segments: string[];
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  raw: Buffer;
  apiKey: string;
}

const ok = (body: unknown, status = 200): Reply => ({ status, body });

function header(headers: IncomingMessage["headers"], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw validationError("request body is not valid JSON", [
      { path: "body", message: `malformed JSON: ${(err as Error).message}` },
    ]);
  }
}

/** Reads the body; a too-large body is drained and reported instead of buffered. */
async function readBody(req: IncomingMessage): Promise<Buffer | "too-large"> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) tooLarge = true;
    if (!tooLarge) chunks.push(chunk);
  }
  return tooLarge ? "too-large" : Buffer.concat(chunks);
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}

function errorReply(err: ApiError): Reply {
  return { status: err.status, body: err.toEnvelope(), ...(err.headers ? { headers: err.headers } : {}) };
}

export function createRequestHandler(deps: ServerDeps) {
  const { state } = deps;

  function authenticate(ctx: Omit<RequestContext, "apiKey">): string {
    let key = header(ctx.headers, HEADERS.apiKey);
    // The spec's webhook example shows a bearer header; the sandbox accepts both on /webhook*.
    if (key === undefined && ctx.segments[0] === "webhook") {
      const auth = header(ctx.headers, "authorization");
      const m = auth ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
      key = m?.[1];
    }
    if (!key) throw unauthorized("UNAUTHORIZED", "missing api-key header");
    if (state.partner.revokedApiKeys.includes(key)) {
      throw unauthorized(
        "NO_ACTIVE_API_KEY",
        "no active API key exists for this account (the key was revoked)",
      );
    }
    if (key !== state.partner.apiKey) throw unauthorized("UNAUTHORIZED", "API key not recognized");
    return key;
  }

  /** `me` resolves when the partner has exactly one entity; unknown ids are 404. */
  function resolveEntity(value: string): string {
    if (value === "me") {
      const ids = [...state.entities.keys()];
      if (ids.length !== 1 || !ids[0]) {
        throw validationError(`"me" needs exactly one entity; this partner has ${ids.length}`, [
          { path: "Service-Entity-Id", message: "ambiguous" },
        ]);
      }
      return ids[0];
    }
    if (!/^ent_[A-Za-z0-9_-]+$/.test(value)) {
      throw validationError("entity id must be ent_<id> or me", [
        { path: "Service-Entity-Id", message: "malformed" },
      ]);
    }
    entityOf(state, value);
    return value;
  }

  function entityFromHeader(ctx: RequestContext): string {
    const value = header(ctx.headers, HEADERS.entity);
    if (!value) {
      throw validationError("Service-Entity-Id header is required on this endpoint", [
        { path: "Service-Entity-Id", message: "required" },
      ]);
    }
    return resolveEntity(value);
  }

  /**
   * Runs a create under its Idempotency-Key. Same key + same request replays the stored response; a
   * different request under the key is 422 IDEMPOTENCY_KEY_REUSED; a key still in flight is 409.
   */
  function idempotent(
    ctx: RequestContext,
    route: string,
    entityId: string,
    required: boolean,
    run: () => Reply,
  ): Reply {
    const key = header(ctx.headers, HEADERS.idempotencyKey);
    if (key === undefined || key === "") {
      if (required) throw badRequest("IDEMPOTENCY_KEY_REQUIRED", "Idempotency-Key header is required");
      return run();
    }
    if (key.length > IDEMPOTENCY_KEY_MAX) {
      throw validationError(`Idempotency-Key must be at most ${IDEMPOTENCY_KEY_MAX} characters`, [
        { path: "Idempotency-Key", message: "too long" },
      ]);
    }
    let body: unknown;
    try {
      body = parseJson(ctx.raw);
    } catch {
      body = { unparsable: ctx.raw.toString("base64") };
    }
    const claim = state.idempotency.claim(ctx.apiKey, key, requestFingerprint({ route, entityId, body }));
    switch (claim.kind) {
      case "mismatch":
        throw new ApiError(
          422,
          "invalid_request_error",
          "IDEMPOTENCY_KEY_REUSED",
          "this Idempotency-Key was used with a different request; use a new key for a new request",
        );
      case "in-progress":
        throw new ApiError(
          409,
          "conflict_error",
          "IDEMPOTENCY_KEY_IN_PROGRESS",
          "a request with this Idempotency-Key is still in progress; retry later",
        );
      case "replay":
        return {
          status: claim.response.status,
          body: claim.response.body,
          headers: { "idempotent-replayed": "true" },
        };
      case "claimed":
        break;
    }
    let reply: Reply;
    try {
      reply = run();
    } catch (err) {
      if (!(err instanceof ApiError)) {
        state.idempotency.release(ctx.apiKey, key);
        throw err;
      }
      reply = errorReply(err);
    }
    return {
      ...reply,
      beforeSend: (final) => {
        // Server errors are not remembered, so a retry with the same key can still succeed.
        if (final.status >= 500) state.idempotency.release(ctx.apiKey, key);
        else state.idempotency.complete(ctx.apiKey, key, { status: final.status, body: final.body });
      },
    };
  }

  function checkSonar(ctx: RequestContext): void {
    const token = header(ctx.headers, HEADERS.sonarToken);
    if (token === undefined) return;
    const result = verifySonarToken(state.sonarSecret, token, state.now());
    if (!result.ok) {
      throw forbidden(
        "FORBIDDEN",
        result.reason === "expired" ? "Service-Sonar-Token has expired" : "Service-Sonar-Token is not valid",
      );
    }
  }

  function methodNotAllowed(ctx: RequestContext): never {
    throw new ApiError(
      405,
      "invalid_request_error",
      "METHOD_NOT_ALLOWED",
      `${ctx.method} is not supported on /${ctx.segments.join("/")}`,
    );
  }

  function route(ctx: RequestContext): Reply {
    const [first, second, third, ...rest] = ctx.segments;
    const m = ctx.method;
    const body = () => parseJson(ctx.raw);
    const list = () => parseListQuery(ctx.query);
    if (rest.length > 0) throw notFound(`no route ${m} /v2/${ctx.segments.join("/")}`);

    switch (first) {
      case "_sandbox":
        if (second === "faults" && third === undefined) {
          if (m === "GET") return ok(deps.faults());
          if (m !== "PUT") methodNotAllowed(ctx);
          const patch = body();
          if (patch === null || typeof patch !== "object" || Array.isArray(patch)) {
            throw validationError("body must be a JSON object of fault options");
          }
          try {
            return ok(deps.setFaults(patch as Partial<FaultConfig>));
          } catch (err) {
            if (err instanceof RangeError) throw validationError(err.message);
            throw err;
          }
        }
        if (second === "stats" && third === undefined) {
          if (m === "GET") return ok(deps.snapshot());
          if (m !== "DELETE") methodNotAllowed(ctx);
          deps.stats.reset();
          return ok(deps.snapshot());
        }
        if (second === "sonar-tokens" && third === undefined) {
          if (m !== "POST") methodNotAllowed(ctx);
          const input = parseOrThrow(z.object({ ttlMs: z.number().int().optional() }), body() ?? {});
          const expiresAtMs = state.now() + (input.ttlMs ?? DEFAULT_SONAR_TTL_MS);
          return ok(
            {
              token: mintSonarToken(state.sonarSecret, expiresAtMs),
              expiresAt: new Date(expiresAtMs).toISOString(),
            },
            201,
          );
        }
        break;

      case "entities":
        if (second === undefined) {
          if (m === "GET") return ok(listEntities(state, list()));
          if (m === "POST")
            return idempotent(ctx, "POST /entities", "-", false, () => ok(createEntity(state, body()), 201));
          methodNotAllowed(ctx);
        }
        if (third === undefined) {
          if (m === "GET") return ok(entityOf(state, resolveEntity(second)).entity);
          if (m === "PATCH") return ok(updateEntity(state, resolveEntity(second), body()));
          if (m === "DELETE") return ok(deleteEntity(state, resolveEntity(second)));
          methodNotAllowed(ctx);
        }
        if (third === "beneficial-owners") {
          const entityId = resolveEntity(second);
          if (m === "GET") return ok(listOwners(state, entityId));
          if (m === "PUT") return ok(replaceOwners(state, entityId, body()));
          methodNotAllowed(ctx);
        }
        break;

      case "accounts": {
        if (third !== undefined) break;
        const entityId = entityFromHeader(ctx);
        if (second === undefined) {
          if (m === "GET") return ok(listAccounts(state, entityId, list(), ctx.query));
          if (m === "POST") {
            return idempotent(ctx, "POST /accounts", entityId, false, () =>
              ok(createAccount(state, entityId, body()), 201),
            );
          }
          methodNotAllowed(ctx);
        }
        if (second === "link") {
          if (m !== "POST") methodNotAllowed(ctx);
          const input = parseOrThrow(AccountLinkRequest, body() ?? {});
          const expiresAtMs = state.now() + LINK_TTL_MS;
          const session = newId("lnk");
          const url = `${deps.baseUrl()}/_sandbox/account-link?session=${session}&ownershipType=${input.ownershipType}`;
          return ok({ url, expiresAt: new Date(expiresAtMs).toISOString() }, 201);
        }
        if (m === "GET") return ok(storedAccountOf(state, entityId, second).account);
        if (m === "PATCH") return ok(updateAccount(state, entityId, second, body()));
        if (m === "DELETE") return ok(deleteAccount(state, entityId, second));
        methodNotAllowed(ctx);
        break;
      }

      case "payments": {
        if (third !== undefined) break;
        const entityId = entityFromHeader(ctx);
        if (second === undefined) {
          if (m === "GET") return ok(listPayments(state, entityId, list(), ctx.query));
          if (m !== "POST") methodNotAllowed(ctx);
          checkSonar(ctx);
          let created = false;
          const reply = idempotent(ctx, "POST /payments", entityId, true, () => {
            const payment = createPayment(state, entityId, body(), {
              onCreated: (stored) => deps.progression.track(stored),
            });
            created = true;
            return ok(payment, 201);
          });
          if (created && shouldDropPaymentResponse(deps.faults())) reply.drop = true;
          return reply;
        }
        if (m === "GET") return ok(paymentOf(state, entityId, second).payment);
        if (m === "PATCH") return ok(updatePayment(state, entityId, second, body()));
        methodNotAllowed(ctx);
        break;
      }

      case "limitations":
        if (second !== undefined) break;
        if (m !== "GET") methodNotAllowed(ctx);
        return ok(limitationsOf(state, entityFromHeader(ctx)));

      case "tools": {
        if (third !== undefined || second === undefined) break;
        const tools: Record<string, (entityId: string) => unknown> = {
          "fx-quote": (e) => fxQuote(state, e, body(), deps.fxQuoteTtlMs),
          "fee-calculator": (e) => feeCalculator(state, e, body()),
          "fast-payment-eligibility": (e) => fastPaymentEligibilityTool(state, e, body()),
          "delivery-estimate": (e) => deliveryEstimate(state, e, body()),
        };
        const tool = tools[second];
        if (!tool) break;
        if (m !== "POST") methodNotAllowed(ctx);
        return ok(tool(entityFromHeader(ctx)));
      }

      case "attachments": {
        if (second !== undefined) break;
        if (m !== "POST") methodNotAllowed(ctx);
        const entityId = entityFromHeader(ctx);
        return idempotent(ctx, "POST /attachments", entityId, false, () =>
          ok(createAttachment(state, entityId, body()), 201),
        );
      }

      case "webhook":
        if (second === undefined) {
          if (m === "GET") return ok(getWebhook(state));
          if (m === "PATCH") return ok(patchWebhook(state, body()));
          if (m === "DELETE") return ok(deleteWebhook(state));
          methodNotAllowed(ctx);
        }
        if (second === "events" && third === undefined) {
          if (m !== "GET") methodNotAllowed(ctx);
          return ok({ data: [...EVENT_TYPES] });
        }
        break;
    }
    throw notFound(`no route ${m} /v2/${ctx.segments.join("/")}`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const url = new URL(req.url ?? "/", "http://sandbox.local");
    const path = url.pathname.replace(/\/+$/, "");
    const segments = path.split("/").filter(Boolean).map(decodeURIComponent);
    const isSandboxRoute = segments[1] === "_sandbox";
    let reply: Reply;
    try {
      if (segments[0] !== "v2")
        throw notFound(`no route ${req.method} ${url.pathname}; the base path is /v2`);
      if (!isSandboxRoute) {
        deps.stats.count(requestKind(req.method ?? "GET", segments.slice(1)));
        const fault = requestFault(deps.faults(), Math.random, deps.bucket);
        if (fault?.status === 503) {
          throw new ApiError(
            503,
            "service_unavailable_error",
            "SERVICE_UNAVAILABLE",
            "sandbox fault: service unavailable",
          );
        }
        if (fault?.status === 429) {
          throw new ApiError(
            429,
            "rate_limit_error",
            "RATE_LIMITED",
            "sandbox fault: too many requests",
            undefined,
            { "retry-after": String(fault.retryAfterSeconds) },
          );
        }
      }
      if (raw === "too-large") {
        throw validationError(`request body exceeds ${MAX_BODY_BYTES} bytes`, [
          { path: "body", message: "too large" },
        ]);
      }
      const base = {
        method: req.method ?? "GET",
        segments: segments.slice(1),
        query: url.searchParams,
        headers: req.headers,
        raw,
      };
      const apiKey = authenticate(base);
      reply = route({ ...base, apiKey });
    } catch (err) {
      if (err instanceof ApiError) {
        reply = errorReply(err);
      } else {
        deps.logger?.warn(
          { err: (err as Error).message, method: req.method, path },
          "sandbox internal error",
        );
        reply = errorReply(new ApiError(500, "internal_error", "INTERNAL_ERROR", "internal sandbox error"));
      }
    }
    if (!isSandboxRoute) {
      if (reply.status === 429) deps.stats.countRateLimited();
      await sleep(latencyFor(deps.faults()));
    }
    reply.beforeSend?.(reply);
    if (reply.drop) {
      // The payment is stored and its key completed: the client sees a dropped connection.
      req.socket.destroy();
      return;
    }
    const payload = reply.body === undefined ? "" : JSON.stringify(reply.body);
    res.writeHead(reply.status, {
      ...(payload ? { "content-type": "application/json; charset=utf-8" } : {}),
      "content-length": Buffer.byteLength(payload),
      ...reply.headers,
    });
    res.end(payload);
  }

  return (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((err: unknown) => {
      deps.logger?.warn({ err: (err as Error).message }, "sandbox request failed");
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json; charset=utf-8" });
        res.end(
          JSON.stringify(
            new ApiError(500, "internal_error", "INTERNAL_ERROR", "internal sandbox error").toEnvelope(),
          ),
        );
      } else {
        res.destroy();
      }
    });
  };
}
