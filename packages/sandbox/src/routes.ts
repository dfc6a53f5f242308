/**
 * The sandbox's route table: every path under `/v2` with its methods and the module function that
 * answers it. Authentication happens before (server.ts); idempotency is asked for per route
 * (idempotent-request.ts). A path that matches no pattern is 404; a known path with another method is
 * 405. Where two patterns match (`/accounts/link` and `/accounts/:id`), the one with more literal
 * segments wins.
 */
import { z } from "zod";
import { createAccount, deleteAccount, listAccounts, storedAccountOf, updateAccount } from "./accounts.js";
import { checkSonar, entityFromHeader, resolveEntity } from "./auth.js";
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
import { ApiError, notFound, parseOrThrow, validationError } from "./errors.js";
import { type FaultConfig, shouldDropPaymentResponse } from "./faults.js";
import { ok, parseJson, type Reply, type RequestContext } from "./http.js";
import { idempotent } from "./idempotent-request.js";
import { newId } from "./ids.js";
import { parseListQuery } from "./pagination.js";
import { createPayment, listPayments, paymentOf, updatePayment } from "./payments.js";
import { type PaymentProgression, returnPayment } from "./progression.js";
import { mintSonarToken } from "./sonar.js";
import type { SandboxState } from "./state.js";
import type { SandboxStats } from "./stats.js";
import { deliveryEstimate, fastPaymentEligibilityTool, feeCalculator, fxQuote } from "./tools.js";
import { deleteWebhook, getWebhook, patchWebhook } from "./webhook-endpoint.js";
import { AccountLinkRequest, EVENT_TYPES, PaymentFailureReason } from "./wire.js";

export const DEFAULT_SONAR_TTL_MS = 10 * 60 * 1000;
const LINK_TTL_MS = 15 * 60 * 1000;

/** What the route handlers need besides the request. */
export interface RouteDeps {
  state: SandboxState;
  faults(): FaultConfig;
  setFaults(patch: Partial<FaultConfig>): FaultConfig;
  progression: PaymentProgression;
  fxQuoteTtlMs: number;
  baseUrl(): string;
  /** Whole-sandbox figures for `GET /_sandbox/stats`. */
  snapshot(): SandboxStats;
  /** Starts the request counters again (`DELETE /_sandbox/stats`). */
  resetStats(): void;
}

/** A matched request: the path parameters and, where the route asks for it, the resolved entity. */
export interface Matched {
  ctx: RequestContext;
  params: Record<string, string>;
  /** Set when the route resolves an entity; "" otherwise. */
  entityId: string;
  body(): unknown;
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
type Handler = (m: Matched) => Reply;

interface Route {
  /** Segments after `/v2`; `:name` matches any one segment. */
  path: string;
  /**
   * Which entity the handlers act for: the `Service-Entity-Id` header or the `:id` path segment,
   * resolved before or after the method is checked (which 4xx a wrong request gets first).
   */
  entity?: { from: "header" | "param"; when: "before-method" | "after-method" };
  methods: Partial<Record<Method, Handler>>;
}

function sandboxRoutes(deps: RouteDeps): Route[] {
  const { state } = deps;
  return [
    {
      path: "_sandbox/faults",
      methods: {
        GET: () => ok(deps.faults()),
        PUT: ({ body }) => {
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
        },
      },
    },
    {
      path: "_sandbox/stats",
      methods: {
        GET: () => ok(deps.snapshot()),
        DELETE: () => {
          deps.resetStats();
          return ok(deps.snapshot());
        },
      },
    },
    {
      // A return, as a bank makes one days after a payment completed: the payment is reported
      // `failed` (or `canceled`) with a reason, and `api.payment.updated` is emitted.
      path: "_sandbox/payments/:id/return",
      methods: {
        POST: ({ params, body }) => {
          const input = parseOrThrow(
            z.object({
              status: z.enum(["failed", "canceled"]).optional(),
              reason: PaymentFailureReason.optional(),
            }),
            body() ?? {},
          );
          const stored = state.payments.get(params.id as string);
          if (!stored) throw notFound(`payment ${params.id} not found`);
          returnPayment(state, stored, input.status, input.reason);
          return ok(stored.toPayment());
        },
      },
    },
    {
      path: "_sandbox/sonar-tokens",
      methods: {
        POST: ({ body }) => {
          const input = parseOrThrow(z.object({ ttlMs: z.number().int().optional() }), body() ?? {});
          const expiresAtMs = state.now() + (input.ttlMs ?? DEFAULT_SONAR_TTL_MS);
          const token = mintSonarToken(state.sonarSecret, expiresAtMs);
          return ok({ token, expiresAt: new Date(expiresAtMs).toISOString() }, 201);
        },
      },
    },
  ];
}

function entityRoutes(deps: RouteDeps): Route[] {
  const { state } = deps;
  const resolved = { from: "param", when: "after-method" } as const;
  return [
    {
      path: "entities",
      methods: {
        GET: ({ ctx }) => ok(listEntities(state, parseListQuery(ctx.query))),
        POST: ({ ctx, body }) =>
          idempotent(state, ctx, { route: "POST /entities", entityId: "-", required: false }, () =>
            ok(createEntity(state, body()), 201),
          ),
      },
    },
    {
      path: "entities/:id",
      entity: resolved,
      methods: {
        GET: ({ entityId }) => ok(entityOf(state, entityId).entity),
        PATCH: ({ entityId, body }) => ok(updateEntity(state, entityId, body())),
        DELETE: ({ entityId }) => ok(deleteEntity(state, entityId)),
      },
    },
    {
      path: "entities/:id/beneficial-owners",
      entity: { from: "param", when: "before-method" },
      methods: {
        GET: ({ entityId }) => ok(listOwners(state, entityId)),
        PUT: ({ entityId, body }) => ok(replaceOwners(state, entityId, body())),
      },
    },
    {
      path: "limitations",
      entity: { from: "header", when: "after-method" },
      methods: { GET: ({ entityId }) => ok(limitationsOf(state, entityId)) },
    },
    {
      path: "attachments",
      entity: { from: "header", when: "after-method" },
      methods: {
        POST: ({ ctx, entityId, body }) =>
          idempotent(state, ctx, { route: "POST /attachments", entityId, required: false }, () =>
            ok(createAttachment(state, entityId, body()), 201),
          ),
      },
    },
  ];
}

function accountRoutes(deps: RouteDeps): Route[] {
  const { state } = deps;
  const fromHeader = { from: "header", when: "before-method" } as const;
  return [
    {
      path: "accounts",
      entity: fromHeader,
      methods: {
        GET: ({ ctx, entityId }) => ok(listAccounts(state, entityId, parseListQuery(ctx.query), ctx.query)),
        POST: ({ ctx, entityId, body }) =>
          idempotent(state, ctx, { route: "POST /accounts", entityId, required: false }, () =>
            ok(createAccount(state, entityId, body()), 201),
          ),
      },
    },
    {
      path: "accounts/link",
      entity: fromHeader,
      methods: {
        POST: ({ body }) => {
          const input = parseOrThrow(AccountLinkRequest, body() ?? {});
          const expiresAtMs = state.now() + LINK_TTL_MS;
          const session = newId("lnk");
          const url = `${deps.baseUrl()}/_sandbox/account-link?session=${session}&ownershipType=${input.ownershipType}`;
          return ok({ url, expiresAt: new Date(expiresAtMs).toISOString() }, 201);
        },
      },
    },
    {
      path: "accounts/:id",
      entity: fromHeader,
      methods: {
        GET: ({ entityId, params }) => ok(storedAccountOf(state, entityId, params.id as string).account),
        PATCH: ({ entityId, params, body }) =>
          ok(updateAccount(state, entityId, params.id as string, body())),
        DELETE: ({ entityId, params }) => ok(deleteAccount(state, entityId, params.id as string)),
      },
    },
  ];
}

function paymentRoutes(deps: RouteDeps): Route[] {
  const { state } = deps;
  const fromHeader = { from: "header", when: "before-method" } as const;
  const create = ({ ctx, entityId, body }: Matched): Reply => {
    checkSonar(state, ctx.headers);
    let created = false;
    const reply = idempotent(state, ctx, { route: "POST /payments", entityId, required: true }, () => {
      const stored = createPayment(state, entityId, body(), {
        onCreated: (s) => deps.progression.track(s),
      });
      created = true;
      // The idempotency record keeps the payment, not this body: a replay renders it as created.
      return { ...ok(stored.toPayment(), 201), remember: stored };
    });
    if (created && shouldDropPaymentResponse(deps.faults())) reply.drop = true;
    return reply;
  };
  return [
    {
      path: "payments",
      entity: fromHeader,
      methods: {
        GET: ({ ctx, entityId }) => ok(listPayments(state, entityId, parseListQuery(ctx.query), ctx.query)),
        POST: create,
      },
    },
    {
      path: "payments/:id",
      entity: fromHeader,
      methods: {
        GET: ({ entityId, params }) => ok(paymentOf(state, entityId, params.id as string).toPayment()),
        PATCH: ({ entityId, params, body }) =>
          ok(updatePayment(state, entityId, params.id as string, body())),
      },
    },
  ];
}

function toolAndWebhookRoutes(deps: RouteDeps): Route[] {
  const { state } = deps;
  const tool = (path: string, run: (entityId: string, body: unknown) => unknown): Route => ({
    path: `tools/${path}`,
    entity: { from: "header", when: "after-method" },
    methods: { POST: ({ entityId, body }) => ok(run(entityId, body())) },
  });
  return [
    tool("fx-quote", (e, b) => fxQuote(state, e, b, deps.fxQuoteTtlMs)),
    tool("fee-calculator", (e, b) => feeCalculator(state, e, b)),
    tool("fast-payment-eligibility", (e, b) => fastPaymentEligibilityTool(state, e, b)),
    tool("delivery-estimate", (e, b) => deliveryEstimate(state, e, b)),
    {
      path: "webhook",
      methods: {
        GET: () => ok(getWebhook(state)),
        PATCH: ({ body }) => ok(patchWebhook(state, body())),
        DELETE: () => ok(deleteWebhook(state)),
      },
    },
    { path: "webhook/events", methods: { GET: () => ok({ data: [...EVENT_TYPES] }) } },
  ];
}

interface CompiledRoute extends Route {
  segments: string[];
  literals: number;
}

function compile(route: Route): CompiledRoute {
  const segments = route.path.split("/");
  return { ...route, segments, literals: segments.filter((s) => !s.startsWith(":")).length };
}

function matchParams(route: CompiledRoute, segments: readonly string[]): Record<string, string> | undefined {
  if (route.segments.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const pattern = route.segments[i] as string;
    const value = segments[i] as string;
    if (pattern.startsWith(":")) params[pattern.slice(1)] = value;
    else if (pattern !== value) return undefined;
  }
  return params;
}

/** Builds the dispatcher: finds the route, resolves its entity, checks the method, runs the handler. */
export function createRouter(deps: RouteDeps): (ctx: RequestContext) => Reply {
  const routes = [
    ...sandboxRoutes(deps),
    ...entityRoutes(deps),
    ...accountRoutes(deps),
    ...paymentRoutes(deps),
    ...toolAndWebhookRoutes(deps),
  ].map(compile);

  const resolve = (route: CompiledRoute, ctx: RequestContext, params: Record<string, string>) =>
    route.entity?.from === "header"
      ? entityFromHeader(deps.state, ctx.headers)
      : resolveEntity(deps.state, params.id as string);

  return (ctx) => {
    let best: { route: CompiledRoute; params: Record<string, string> } | undefined;
    for (const route of routes) {
      const params = matchParams(route, ctx.segments);
      if (params && (!best || route.literals > best.route.literals)) best = { route, params };
    }
    if (!best) throw notFound(`no route ${ctx.method} /v2/${ctx.segments.join("/")}`);
    const { route, params } = best;
    let entityId = "";
    if (route.entity?.when === "before-method") entityId = resolve(route, ctx, params);
    const handler = route.methods[ctx.method as Method];
    if (!handler) {
      throw new ApiError(
        405,
        "invalid_request_error",
        "METHOD_NOT_ALLOWED",
        `${ctx.method} is not supported on /${ctx.segments.join("/")}`,
      );
    }
    if (route.entity?.when === "after-method") entityId = resolve(route, ctx, params);
    return handler({ ctx, params, entityId, body: () => parseJson(ctx.raw) });
  };
}
