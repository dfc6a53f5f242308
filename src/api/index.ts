/**
 * Public face of the HTTP API (`/api/v1`, JSON, errors as `{ "error": { "code", "message" } }`).
 * `registerApi` adds every route to a Fastify app on which src/auth's `registerAuth` already runs.
 * Each route states its shapes with the zod schemas of schemas.ts: requests are validated by them and
 * `GET /api/v1/openapi.json` (OpenAPI 3.1) is generated from them. New routes follow the same pattern:
 * `{ preHandler: allow(permission), schema }`, throw `ApiError`, and `auditRequest` what was done.
 */
import fastifySwagger from "@fastify/swagger";
import type { FastifyInstance, FastifyReply } from "fastify";
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
} from "fastify-type-provider-zod";
import { packageVersion } from "../assets/index.js";
import type { ResultFileSource } from "../server/result-download.js";
import { MAX_ATTACHMENT_FILES } from "../uploads/index.js";
import { registerApprovalRoutes } from "./approval-routes.js";
import { registerAuditRoutes } from "./audit-routes.js";
import { registerBatchRoutes } from "./batch-routes.js";
import type { ApiContext } from "./context.js";
import { registerCorrectionRoutes } from "./correction-routes.js";
import { registerLedgerRoutes } from "./ledger-routes.js";
import { createPayeeDirectory } from "./payee-directory.js";
import { createProgressFeed, registerEventRoute } from "./progress-feed.js";
import { registerSessionRoutes } from "./session-routes.js";
import { registerSheetRoutes } from "./sheet-routes.js";
import { registerStopRoutes } from "./stop-routes.js";

export { ApiError, errorBody } from "./api-error.js";
export type { ApiContext } from "./context.js";
export { LOGIN_ATTEMPTS_PER_MINUTE } from "./session-routes.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** A multipart request body's description for the OpenAPI document (the route reads the parts). */
    multipartBody?: object;
  }
}

export interface RegisterApiOptions {
  resultFile?: ResultFileSource | undefined;
  sendResult: (
    reply: FastifyReply,
    source: ResultFileSource | undefined,
    batchId: string,
    format: "csv" | "xlsx",
  ) => Promise<void>;
}

export const OPENAPI_PATH = "/api/v1/openapi.json";

const API_DESCRIPTION = `The payouts HTTP API: upload and validate payout sheets, submit them as batches, follow every row,
approve held batches, retry failed rows and download result files. See docs/api.md for authentication,
errors and paging.`;

export async function registerApi(
  app: FastifyInstance,
  ctx: ApiContext,
  options: RegisterApiOptions,
): Promise<void> {
  await app.register(import("@fastify/multipart"), {
    // The sheet (or a .zip of it and its files) and the attachment files beside it.
    limits: { fileSize: ctx.uploadLimitBytes, files: MAX_ATTACHMENT_FILES + 1, fields: 5, fieldSize: 1024 },
    throwFileSizeLimit: true,
  });
  await app.register(fastifySwagger, {
    openapi: {
      openapi: "3.1.0",
      info: { title: "payouts API", version: packageVersion(), description: API_DESCRIPTION },
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", description: "An API token (`payouts token create`)." },
          session: {
            type: "apiKey",
            in: "cookie",
            name: "payouts_session",
            description: "The console's session; state-changing requests also need `x-csrf-token`.",
          },
        },
      },
      security: [{ bearer: [] }, { session: [] }],
    },
    // Only /api/v1 is described (the console pages, queue view and webhook receiver are not the API).
    transform: (input) => {
      if (!input.url.startsWith("/api/v1/") || input.url === OPENAPI_PATH) {
        return { schema: { ...input.schema, hide: true }, url: input.url };
      }
      const multipart = input.route.config?.multipartBody;
      const out = jsonSchemaTransform(input);
      return multipart ? { ...out, schema: { ...out.schema, body: multipart } } : out;
    },
    transformObject: jsonSchemaTransformObject,
  });
  const feed = createProgressFeed(ctx.store, ctx.prefix);
  app.addHook("onClose", async () => feed.close());
  const payees = createPayeeDirectory(ctx.client);
  await app.register(async (api) => {
    // Requests are validated by the routes' zod schemas, and answers checked against them.
    api.setValidatorCompiler(validatorCompiler);
    api.setSerializerCompiler(serializerCompiler);
    registerSessionRoutes(api, ctx);
    registerSheetRoutes(api, ctx);
    registerBatchRoutes(api, ctx, { ...options, payees });
    registerApprovalRoutes(api, ctx);
    registerStopRoutes(api, ctx);
    registerAuditRoutes(api, ctx);
    registerCorrectionRoutes(api, ctx);
    registerLedgerRoutes(api, ctx);
    registerEventRoute(api, feed);
  });
  // The description of the API, for integrators' tools and the console's reference page: open, no data.
  app.get(OPENAPI_PATH, async (_request, reply) =>
    reply.header("cache-control", "no-cache").send(app.swagger()),
  );
}
