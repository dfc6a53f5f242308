/**
 * Console log-in: `GET /api/v1/csrf` (a CSRF token for the log-in form), `POST /api/v1/session`
 * (name + password → HttpOnly SameSite=Strict session cookie; rate-limited per client address),
 * `GET /api/v1/session` (who am I, my permissions, a fresh CSRF token), `DELETE /api/v1/session`.
 */
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { auditRequest } from "../audit/index.js";
import { permissionsOf, principalOf, SESSION_COOKIE, SESSION_TTL_SECONDS } from "../auth/index.js";
import { ApiError } from "./api-error.js";
import type { ApiContext } from "./context.js";
import { ErrorBody, errors, Session } from "./schemas.js";

/** Log-in attempts per client address per minute. */
export const LOGIN_ATTEMPTS_PER_MINUTE = 10;

export function registerSessionRoutes(parent: FastifyInstance, ctx: ApiContext): void {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const tags = ["session"];
  app.get(
    "/api/v1/csrf",
    {
      schema: {
        tags,
        summary: "A CSRF token for the console's log-in form",
        response: { 200: z.object({ csrfToken: z.string() }) },
      },
    },
    async (_request, reply) => ({ csrfToken: reply.generateCsrf() }),
  );

  app.post(
    "/api/v1/session",
    {
      config: { rateLimit: { max: LOGIN_ATTEMPTS_PER_MINUTE, timeWindow: 60_000 } },
      preValidation: app.csrfProtection,
      schema: {
        tags,
        summary: "Log in to the console (sets the session cookie; needs the CSRF token)",
        body: z.object({ name: z.string().max(200), password: z.string().max(1000) }),
        response: {
          200: Session.omit({ kind: true }),
          400: ErrorBody,
          401: ErrorBody,
          403: ErrorBody,
          429: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const { name, password } = request.body;
      const user = await ctx.auth.checkLogin(name, password);
      if (!user) {
        request.principal = undefined;
        await ctx.audit.record({
          actor: { kind: "anonymous", name: name.slice(0, 64) },
          action: "login",
          from: request.ip,
          outcome: "denied",
        });
        throw new ApiError(401, "UNAUTHENTICATED", "wrong name or password, or the user is disabled");
      }
      const sessionId = await ctx.auth.createSession(user.name);
      reply.setCookie(SESSION_COOKIE, sessionId, {
        path: "/",
        httpOnly: true,
        sameSite: "strict",
        secure: request.protocol === "https",
        maxAge: SESSION_TTL_SECONDS,
      });
      request.principal = { kind: "user", name: user.name, role: user.role };
      await auditRequest(ctx.audit, request, "login", user.name, "ok");
      return {
        name: user.name,
        role: user.role,
        permissions: permissionsOf(user.role),
        csrfToken: reply.generateCsrf(),
      };
    },
  );

  app.get(
    "/api/v1/session",
    {
      schema: {
        tags,
        summary: "Who am I: name, role, permissions, a CSRF token",
        response: { 200: Session, ...errors() },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      return {
        name: p.name,
        kind: p.kind,
        role: p.role,
        permissions: permissionsOf(p.role),
        csrfToken: reply.generateCsrf(),
      };
    },
  );

  app.delete(
    "/api/v1/session",
    {
      preValidation: app.csrfProtection,
      schema: { tags, summary: "Log out", response: { 204: z.null().describe("Logged out."), ...errors() } },
    },
    async (request, reply) => {
      const p = principalOf(request);
      if (request.sessionId) await ctx.auth.endSession(request.sessionId);
      reply.clearCookie(SESSION_COOKIE, { path: "/" });
      await auditRequest(ctx.audit, request, "logout", p.name, "ok");
      return reply.code(204).send(null);
    },
  );
}
