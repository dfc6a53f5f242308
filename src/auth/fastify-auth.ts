/**
 * Authentication and the role check for Fastify routes.
 *
 * `registerAuth(app, …)` reads who is asking on every request (a `Bearer` token, else the session
 * cookie) into `request.principal`; it refuses nothing by itself. Each route then states what it does
 * with `preHandler: allow("batches.submit")`: 401 UNAUTHENTICATED without a principal, 403 FORBIDDEN
 * when the role may not, and for console sessions a CSRF token on every state-changing request
 * (tokens are sent by programs, not by browsers, so they carry none).
 */

import type {} from "@fastify/cookie";
import type {} from "@fastify/csrf-protection";
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from "fastify";
import { ApiError } from "../api/api-error.js";
import type { AuthStore, Principal } from "./auth-store.js";
import { can, type Permission } from "./roles.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Who is asking; undefined for an anonymous request. Set by registerAuth. */
    principal: Principal | undefined;
    /** The raw session id from the cookie, when the request came with a live session. */
    sessionId: string | undefined;
  }
}

export const SESSION_COOKIE = "payouts_session";

export interface AuthOptions {
  store: AuthStore;
}

export function registerAuth(app: FastifyInstance, options: AuthOptions): void {
  app.decorateRequest("principal", undefined);
  app.decorateRequest("sessionId", undefined);
  app.addHook("onRequest", async (request) => {
    const header = request.headers.authorization;
    if (typeof header === "string" && /^bearer /i.test(header)) {
      request.principal = await options.store.principalForToken(header.slice(7).trim());
      return;
    }
    const sessionId = request.cookies?.[SESSION_COOKIE];
    if (sessionId) {
      const principal = await options.store.principalForSession(sessionId);
      if (principal) {
        request.principal = principal;
        request.sessionId = sessionId;
      }
    }
  });
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function checkCsrf(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  return new Promise((resolve, reject) => {
    request.server.csrfProtection(request, reply, (err?: Error) => {
      if (err) reject(new ApiError(403, "CSRF_INVALID", "missing or invalid CSRF token; reload the page"));
      else resolve();
    });
  });
}

/** The principal of a request that passed `allow` (throws when there is none, which `allow` prevents). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new ApiError(401, "UNAUTHENTICATED", "log in or send a bearer token");
  return request.principal;
}

/** A preHandler that lets the request through only for a principal whose role has `permission`. */
export function allow(permission: Permission): preHandlerAsyncHookHandler {
  return async function allowed(request, reply) {
    const principal = principalOf(request);
    if (!can(principal.role, permission)) {
      throw new ApiError(403, "FORBIDDEN", `role ${principal.role} may not do this (${permission})`);
    }
    if (principal.kind === "user" && !SAFE_METHODS.has(request.method)) await checkCsrf(request, reply);
  };
}
