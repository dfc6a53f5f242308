/**
 * Approvals over HTTP (docs/design.md §3.10): `GET /api/v1/batches/{id}/approval`, and
 * `POST /api/v1/batches/{id}/approve` / `/reject` `{ reason }` for the `approver` role (and admin).
 * 403 FORBIDDEN without the role, 403 SELF_APPROVAL for the batch's submitter, 409
 * NOT_AWAITING_APPROVAL when it is not awaiting approval, 404 for an unknown batch. The decision and
 * its follow-up (rows queued or canceled) are src/approvals'; every attempt is in the audit trail.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  type ApprovalRecord,
  ApprovalStore,
  approvalAuditTo,
  approveBatch,
  type Decider,
  type DecisionContext,
  DecisionError,
  type HeldCorrection,
  rejectBatch,
} from "../approvals/index.js";
import { allow, can, principalOf } from "../auth/index.js";
import { type BatchStore, decodeStaticRow } from "../batches/index.js";
import { formatMinorOrRaw } from "../money/index.js";
import { BATCH_ID_PATTERN } from "../row-identity/index.js";
import { ApiError } from "./api-error.js";
import type { ApiContext } from "./context.js";
import { ApprovalView, BatchIdParams, errors, RejectBody } from "./schemas.js";

type Largest = z.output<typeof ApprovalView>["largest"];
/** Largest rows shown per currency. */
const LARGEST_PER_CURRENCY = 5;

const money = formatMinorOrRaw;

/**
 * The batch's largest rows per currency, for the approver: found by one walk of the batch's rows the
 * first time and kept with the batch (its rows do not change while it waits for approval).
 */
async function largestRows(store: BatchStore, batchId: string): Promise<Largest> {
  const key = `${store.keys.batch(batchId)}:api:largest`;
  const kept = await store.redis.get(key);
  if (kept) return JSON.parse(kept) as Largest;
  const batch = await store.getBatch(batchId);
  const top = new Map<string, Largest>();
  let scan = "0";
  do {
    const [next, flat] = await store.redis.hscan(store.keys.rows(batchId), scan, "COUNT", 5000);
    for (let i = 0; i < flat.length; i += 2) {
      const { instruction: r, source } = decodeStaticRow(flat[i]!, flat[i + 1]!, batch?.sheet.keys);
      const list = top.get(r.currency) ?? [];
      const smallest = list.at(-1);
      if (list.length >= LARGEST_PER_CURRENCY && smallest && Number(smallest.amount) >= r.amount) continue;
      const payee = source?.to_account;
      list.push({
        row: r.rowNumber,
        reference: r.reference ?? null,
        payee: typeof payee === "string" && payee !== "" ? payee : r.receivingAccountId,
        // Minor units while collecting; formatted below.
        amount: String(r.amount),
        currency: r.currency,
      });
      list.sort((a, b) => Number(b.amount) - Number(a.amount));
      top.set(r.currency, list.slice(0, LARGEST_PER_CURRENCY));
    }
    scan = next;
  } while (scan !== "0");
  const largest = [...top.keys()]
    .sort()
    .flatMap((c) => top.get(c)!.map((l) => ({ ...l, amount: money(Number(l.amount), c) })));
  if (batch?.rowsRecorded) await store.redis.set(key, JSON.stringify(largest), "EX", 30 * 24 * 3600);
  return largest;
}

/** The approval as the API shows it. */
export function approvalView(
  record: ApprovalRecord,
  largest: Largest = [],
  corrections: readonly HeldCorrection[] = [],
): z.output<typeof ApprovalView> {
  return {
    status: record.status,
    required: record.required,
    submittedBy: record.submittedBy,
    requestedAt: record.requestedAt,
    expiresAt: record.expiresAt,
    approvals: record.approvals,
    reasons: record.reasons.map((r) => ({
      currency: r.currency,
      total: money(r.total, r.currency),
      threshold: money(r.threshold, r.currency),
      rule: r.rule,
    })),
    largest,
    decidedAt: record.decidedAt ?? null,
    decidedBy: record.decidedBy ?? null,
    reason: record.reason ?? null,
    heldFor: record.heldFor ?? "batch",
    round: record.round ?? 1,
    corrections: corrections.map((c) => ({ row: c.rowNumber, by: c.by, via: c.via, changes: c.changes })),
  };
}

export function registerApprovalRoutes(parent: FastifyInstance, ctx: ApiContext): void {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const tags = ["approvals"];
  const approvals = new ApprovalStore(ctx.redis, { prefix: ctx.prefix, audit: approvalAuditTo(ctx.audit) });
  const decisions: DecisionContext = {
    approvals,
    store: ctx.store,
    enqueuer: ctx.enqueuer,
    audit: approvalAuditTo(ctx.audit),
    logger: app.log,
  };

  const viewOf = async (record: ApprovalRecord) =>
    approvalView(
      record,
      await largestRows(ctx.store, record.batchId),
      record.status === "awaiting-approval" ? await approvals.heldCorrections(record.batchId) : [],
    );
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
      // A rejection ends every row canceled here, outside the worker: it sweeps at once, so the batch
      // finishes (final result file, notification) now rather than at its next sweep.
      if (outcome === "rejected") await ctx.sweepSoon();
      return { outcome, approval: await viewOf(approval) };
    } catch (err) {
      if (err instanceof DecisionError) throw new ApiError(err.status, err.code, err.message);
      throw err;
    }
  };

  const Decision = z.object({
    outcome: z.string().describe("`recorded`, `approved`, `already` or `rejected`."),
    approval: ApprovalView,
  });

  app.get(
    "/api/v1/batches/:id/approval",
    {
      preValidation: allow("batches.read"),
      schema: {
        tags,
        summary: "A batch's approval: why it is held, its largest rows, who approved (null: none needed)",
        params: BatchIdParams,
        response: { 200: z.object({ approval: ApprovalView.nullable() }), ...errors(404) },
      },
    },
    async (request) => {
      const id = batchIdOf(request.params.id);
      const record = await approvals.get(id);
      if (!record) {
        if (!(await ctx.store.getBatch(id))) throw new ApiError(404, "NOT_FOUND", `no batch ${id}`);
        return { approval: null };
      }
      return { approval: await viewOf(record) };
    },
  );

  app.post(
    "/api/v1/batches/:id/approve",
    {
      preValidation: allow("batches.approve"),
      schema: {
        tags,
        summary: "Approve a held batch (approvers; never the submitter)",
        params: BatchIdParams,
        response: { 200: Decision, ...errors(404, 409) },
      },
    },
    async (request) => answer(approveBatch(decisions, batchIdOf(request.params.id), deciderOf(request))),
  );

  app.post(
    "/api/v1/batches/:id/reject",
    {
      preValidation: allow("batches.approve"),
      schema: {
        tags,
        summary: "Reject a held batch with a reason: every row ends canceled, nothing is paid",
        params: BatchIdParams,
        body: RejectBody,
        response: { 200: Decision, ...errors(400, 404, 409) },
      },
    },
    async (request) =>
      answer(rejectBatch(decisions, batchIdOf(request.params.id), deciderOf(request), request.body.reason)),
  );
}
