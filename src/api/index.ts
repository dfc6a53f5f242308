/**
 * Public face of the HTTP API (`/api/v1`, JSON, errors as `{ "error": { "code", "message" } }`).
 * `registerApi` adds every route to a Fastify app on which src/auth's `registerAuth` already runs.
 * New routes (e.g. approvals) follow the same pattern: `{ preHandler: allow(permission) }`, throw
 * `ApiError`, and `auditRequest` what was done.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import type { ResultFileSource } from "../server/result-download.js";
import { registerApprovalRoutes } from "./approval-routes.js";
import { registerAuditRoutes } from "./audit-routes.js";
import { registerBatchRoutes } from "./batch-routes.js";
import type { ApiContext } from "./context.js";
import { registerLedgerRoutes } from "./ledger-routes.js";
import { createProgressFeed, registerEventRoute } from "./progress-feed.js";
import { registerSessionRoutes } from "./session-routes.js";
import { registerSheetRoutes } from "./sheet-routes.js";

export { ApiError, errorBody } from "./api-error.js";
export { type ApiContext, DEFAULT_UPLOAD_LIMIT_BYTES } from "./context.js";
export { LOGIN_ATTEMPTS_PER_MINUTE } from "./session-routes.js";

export interface RegisterApiOptions {
  resultFile?: ResultFileSource | undefined;
  sendResult: (
    reply: FastifyReply,
    source: ResultFileSource | undefined,
    batchId: string,
    format: "csv" | "xlsx",
  ) => Promise<void>;
}

export async function registerApi(
  app: FastifyInstance,
  ctx: ApiContext,
  options: RegisterApiOptions,
): Promise<void> {
  await app.register(import("@fastify/multipart"), {
    limits: { fileSize: ctx.uploadLimitBytes, files: 1, fields: 5, fieldSize: 1024 },
    throwFileSizeLimit: true,
  });
  const feed = createProgressFeed(ctx.store, ctx.prefix);
  app.addHook("onClose", async () => feed.close());
  registerSessionRoutes(app, ctx);
  registerSheetRoutes(app, ctx);
  registerBatchRoutes(app, ctx, options);
  registerApprovalRoutes(app, ctx);
  registerAuditRoutes(app, ctx);
  registerLedgerRoutes(app, ctx);
  registerEventRoute(app, feed);
}
