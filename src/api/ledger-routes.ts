/**
 * `GET /api/v1/batches/{id}/audit[?limit=N]`: the batch held against the service's ledger now
 * (src/ledger-audit): every payment the service holds for the batch, by its metadata, paged, against
 * every row. The outcome is kept on the batch (as after `payouts audit`); the answer lists the first
 * `limit` differences (default 100, at most 10,000) and says how many there were. It reads
 * ceil(payments / 50) pages from the service, so a large batch takes a while.
 */
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { allow } from "../auth/index.js";
import { auditAndRecord, DIFFERENCE_KINDS, UnknownAuditBatchError } from "../ledger-audit/index.js";
import { markForLook } from "../reconcile/index.js";
import { BATCH_ID_PATTERN } from "../row-identity/index.js";
import { ApiError } from "./api-error.js";
import type { ApiContext } from "./context.js";
import { BatchIdParams, errors, Limit } from "./schemas.js";

const Difference = z.object({
  kind: z.enum(DIFFERENCE_KINDS),
  row: z.number().int().nullable(),
  reference: z.string().nullable(),
  paymentId: z.string().nullable(),
  expected: z.string().nullable(),
  found: z.string().nullable(),
  message: z.string(),
});

/** The answer of the audit route. */
export const LedgerAuditResponse = z.object({
  batchId: z.string(),
  /** `ledger: 20,000 rows match, 0 differences`, or the differences by kind. */
  summary: z.string(),
  matches: z.boolean(),
  rows: z.number().int(),
  payments: z.number().int(),
  matched: z.number().int(),
  /**
   * Rows whose payment is newer than what they show and disagrees (returned since their last look):
   * marked for the worker, which makes them follow; audit again once it has.
   */
  behind: z.number().int(),
  /** Every difference found, by kind. */
  byKind: z.record(z.enum(DIFFERENCE_KINDS), z.number().int()),
  /** The first `limit` differences, by row. */
  differences: z.array(Difference),
  /** More differences exist than listed. */
  truncated: z.boolean(),
  at: z.string(),
});
export type LedgerAuditResponse = z.infer<typeof LedgerAuditResponse>;

export function registerLedgerRoutes(parent: FastifyInstance, ctx: ApiContext): void {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  app.get(
    "/api/v1/batches/:id/audit",
    {
      preValidation: allow("batches.read"),
      schema: {
        tags: ["batches"],
        summary: "Hold the batch against the service's ledger now (as `payouts audit`)",
        params: BatchIdParams,
        querystring: z.object({ limit: Limit(100, 10_000) }),
        response: { 200: LedgerAuditResponse, ...errors(404) },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!BATCH_ID_PATTERN.test(id)) throw new ApiError(404, "NOT_FOUND", `no batch ${id}`);
      const { limit } = request.query;
      try {
        const { report } = await auditAndRecord({
          store: ctx.store,
          client: ctx.client,
          batchId: id,
          follow: markForLook(ctx.reconcile),
        });
        return {
          batchId: report.batchId,
          summary: report.summary,
          matches: report.differences.length === 0,
          rows: report.rows,
          payments: report.payments,
          matched: report.matched,
          behind: report.behind,
          byKind: report.byKind,
          differences: report.differences.slice(0, limit).map((d) => ({
            kind: d.kind,
            row: d.rowNumber ?? null,
            reference: d.reference ?? null,
            paymentId: d.paymentId ?? null,
            expected: d.expected ?? null,
            found: d.found ?? null,
            message: d.message,
          })),
          truncated: report.differences.length > limit,
          at: report.at,
        } satisfies LedgerAuditResponse;
      } catch (err) {
        if (err instanceof UnknownAuditBatchError) throw new ApiError(404, "NOT_FOUND", `no batch ${id}`);
        throw err;
      }
    },
  );
}
