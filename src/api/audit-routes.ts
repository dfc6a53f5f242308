/** `GET /api/v1/audit?limit&cursor`: the audit trail, newest first (admins). */
import type { FastifyInstance } from "fastify";
import { AUDIT_CURSOR_PATTERN } from "../audit/index.js";
import { allow } from "../auth/index.js";
import { ApiError } from "./api-error.js";
import type { ApiContext } from "./context.js";

export function registerAuditRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get<{ Querystring: { limit?: string; cursor?: string } }>(
    "/api/v1/audit",
    { preHandler: allow("audit.read") },
    async (request) => {
      const limit = request.query.limit === undefined ? 50 : Number(request.query.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) {
        throw new ApiError(400, "INVALID_REQUEST", "limit must be a whole number from 1 to 500");
      }
      const cursor = request.query.cursor;
      if (cursor !== undefined && !AUDIT_CURSOR_PATTERN.test(cursor)) {
        throw new ApiError(400, "INVALID_REQUEST", "cursor is not one this server gave");
      }
      return ctx.audit.list({ limit, cursor });
    },
  );
}
