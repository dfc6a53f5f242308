/**
 * Stopping a batch: `POST /api/v1/batches/:id/pause|resume|cancel` (as `payouts pause|resume|cancel`).
 * The work is src/batch-control's; these routes read requests, audit and say what happened.
 */
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { ApprovalStore, approvalGate } from "../approvals/index.js";
import { auditRequest } from "../audit/index.js";
import { allow, principalOf } from "../auth/index.js";
import {
  cancelBatch,
  pauseBatch,
  readStop,
  resumeBatch,
  type StopRefusal,
  StopRefusedError,
} from "../batch-control/index.js";
import { BATCH_ID_PATTERN } from "../row-identity/index.js";
import { ApiError } from "./api-error.js";
import type { ApiContext } from "./context.js";
import { BatchIdParams, BatchStopView, CancelAnswer, errors, PauseBody } from "./schemas.js";

const STATUS: Record<StopRefusal, 404 | 409> = {
  "unknown-batch": 404,
  finished: 409,
  canceled: 409,
  "not-paused": 409,
  "already-paused": 409,
};

export function registerStopRoutes(parent: FastifyInstance, ctx: ApiContext): void {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const tags = ["batches"];
  const gate = approvalGate(new ApprovalStore(ctx.redis, { prefix: ctx.prefix }), ctx.pipeline.approval);
  const batchIdOf = (id: string) => {
    if (!BATCH_ID_PATTERN.test(id)) throw new ApiError(404, "NOT_FOUND", `no batch ${id}`);
    return id;
  };
  /** Runs a stop, auditing it; a refusal is a 404 or 409 that says why. */
  async function audited<T extends object>(
    request: Parameters<typeof auditRequest>[1],
    action: string,
    batchId: string,
    work: () => Promise<T>,
  ): Promise<T> {
    try {
      const result = await work();
      await auditRequest(ctx.audit, request, action, batchId, "ok", result as Record<string, unknown>);
      return result;
    } catch (err) {
      if (!(err instanceof StopRefusedError)) throw err;
      await auditRequest(ctx.audit, request, action, batchId, "denied", { refusal: err.refusal });
      throw new ApiError(
        STATUS[err.refusal],
        err.refusal === "unknown-batch" ? "NOT_FOUND" : "CONFLICT",
        err.message,
      );
    }
  }

  app.post(
    "/api/v1/batches/:id/pause",
    {
      preValidation: allow("batches.pause"),
      schema: {
        tags,
        summary: "Pause a batch: none of its rows is sent until it is resumed (as `payouts pause`)",
        description:
          "Rows already sent finish; a job already queued sends nothing while the batch is paused.",
        params: BatchIdParams,
        body: PauseBody,
        response: { 200: BatchStopView, ...errors(404, 409) },
      },
    },
    async (request) => {
      const batchId = batchIdOf(request.params.id);
      const reason = request.body?.reason?.trim() || "paused by an operator";
      await audited(request, "batch.pause", batchId, async () => {
        const changed = await pauseBatch(ctx.store, batchId, { by: principalOf(request).name, reason });
        return { reason, changed };
      });
      return readStop(ctx.store, batchId);
    },
  );

  app.post(
    "/api/v1/batches/:id/resume",
    {
      preValidation: allow("rows.retry"),
      schema: {
        tags,
        summary: "Resume a paused batch: its rows never sent are queued again (as `payouts resume`)",
        params: BatchIdParams,
        response: { 200: BatchStopView, ...errors(404, 409) },
      },
    },
    async (request) => {
      const batchId = batchIdOf(request.params.id);
      await audited(request, "batch.resume", batchId, async () => ({
        queued: await resumeBatch(ctx.store, ctx.enqueuer, gate, batchId),
      }));
      return readStop(ctx.store, batchId);
    },
  );

  app.post(
    "/api/v1/batches/:id/cancel",
    {
      preValidation: allow("rows.cancel"),
      schema: {
        tags,
        summary:
          "Cancel a batch: rows never sent become canceled, payments still scheduled are canceled at the service (as `payouts cancel`)",
        description:
          "Rows already on their way or paid keep their course. Safe to call again. The batch then finishes: final result file, notification.",
        params: BatchIdParams,
        response: { 200: CancelAnswer, ...errors(404, 409) },
      },
    },
    async (request) => {
      const batchId = batchIdOf(request.params.id);
      const outcome = await audited(request, "batch.cancel", batchId, () =>
        cancelBatch(ctx.store, ctx.client, batchId, { by: principalOf(request).name }),
      );
      await ctx.sweepSoon();
      return { ...outcome, stop: await readStop(ctx.store, batchId) };
    },
  );
}
