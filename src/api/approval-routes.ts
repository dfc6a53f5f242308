/**
 * Approvals over HTTP (docs/design.md §3.10): `GET /api/v1/batches/{id}/approval`, and
 * `POST /api/v1/batches/{id}/approve` / `/reject` `{ reason }` for the `approver` role (and admin).
 * 403 FORBIDDEN without the role, 403 SELF_APPROVAL for the batch's submitter, 409
 * NOT_AWAITING_APPROVAL when it is not awaiting approval, 404 for an unknown batch. The decision and
 * its follow-up (rows queued or canceled) are src/approvals'; every attempt is in the audit trail.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import {
  type ApprovalRecord,
  ApprovalStore,
  approvalAuditTo,
  approveBatch,
  type Decider,
  type DecisionContext,
  DecisionError,
  MAX_REASON_LENGTH,
  rejectBatch,
} from "../approvals/index.js";
import { allow, can, principalOf } from "../auth/index.js";
import { BATCH_ID_PATTERN } from "../row-identity/index.js";
import { ApiError } from "./api-error.js";
import type { ApiContext } from "./context.js";

/** The approval as the API shows it. */
export function approvalView(record: ApprovalRecord) {
  return {
    status: record.status,
    required: record.required,
    submittedBy: record.submittedBy,
    requestedAt: record.requestedAt,
    expiresAt: record.expiresAt,
    approvals: record.approvals,
    reasons: record.reasons,
    decidedAt: record.decidedAt ?? null,
    decidedBy: record.decidedBy ?? null,
    reason: record.reason ?? null,
  };
}

export function registerApprovalRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const approvals = new ApprovalStore(ctx.redis, { prefix: ctx.prefix, audit: approvalAuditTo(ctx.audit) });
  const decisions: DecisionContext = {
    approvals,
    store: ctx.store,
    enqueuer: ctx.enqueuer,
    audit: approvalAuditTo(ctx.audit),
    logger: app.log,
  };

  const batchIdOf = (id: string) => {
    if (!BATCH_ID_PATTERN.test(id)) throw new ApiError(404, "NOT_FOUND", `no batch ${id}`);
    return id;
  };
  const deciderOf = (request: FastifyRequest): Decider => {
    const principal = principalOf(request);
    return {
      name: principal.name,
      kind: principal.kind,
      role: principal.role,
      mayApprove: can(principal.role, "batches.approve"),
      from: request.ip,
    };
  };
  const answer = async (decision: Promise<Awaited<ReturnType<typeof approveBatch>>>) => {
    try {
      const { outcome, approval } = await decision;
      return { outcome, approval: approvalView(approval) };
    } catch (err) {
      if (err instanceof DecisionError) throw new ApiError(err.status, err.code, err.message);
      throw err;
    }
  };

  app.get<{ Params: { id: string } }>(
    "/api/v1/batches/:id/approval",
    { preHandler: allow("batches.read") },
    async (request) => {
      const id = batchIdOf(request.params.id);
      const record = await approvals.get(id);
      if (!record) {
        if (!(await ctx.store.getBatch(id))) throw new ApiError(404, "NOT_FOUND", `no batch ${id}`);
        return { approval: null };
      }
      return { approval: approvalView(record) };
    },
  );

  app.post<{ Params: { id: string } }>(
    "/api/v1/batches/:id/approve",
    { preHandler: allow("batches.approve") },
    async (request) => answer(approveBatch(decisions, batchIdOf(request.params.id), deciderOf(request))),
  );

  app.post<{ Params: { id: string }; Body: { reason?: unknown } | undefined }>(
    "/api/v1/batches/:id/reject",
    { preHandler: allow("batches.approve") },
    async (request) => {
      const reason = request.body?.reason;
      if (typeof reason !== "string" || reason.trim() === "" || reason.length > MAX_REASON_LENGTH) {
        throw new ApiError(
          400,
          "INVALID_REQUEST",
          `send { reason }: why, in 1 to ${MAX_REASON_LENGTH} characters`,
        );
      }
      return answer(rejectBatch(decisions, batchIdOf(request.params.id), deciderOf(request), reason));
    },
  );
}
