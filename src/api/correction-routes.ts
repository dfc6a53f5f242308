/**
 * `POST /api/v1/batches/{id}/rows/{row}/correct` `{ amount?, to_account?, delivery? }`: the console's
 * "correct and retry" of a failed, rejected, canceled, returned or error row. Through the one gate
 * (src/gate): the corrected row is checked as a new sheet's row, refused as a possible duplicate unless
 * confirmed, held for approval when the approval rules say so (docs/design.md §3.14), and recorded in
 * the audit trail with what changed.
 */
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { allow } from "../auth/index.js";
import { passGate } from "../gate/index.js";
import { BATCH_ID_PATTERN } from "../row-identity/index.js";
import { ApiError } from "./api-error.js";
import type { ApiContext } from "./context.js";
import { gateOf } from "./gate-caller.js";
import { rowByNumber } from "./row-views.js";
import { errors, RowParams } from "./schemas.js";

const Cell = z.string().trim().min(1).max(200);

const CorrectBody = z
  .object({
    amount: Cell.optional().describe("The new amount as a sheet would show it (`1250.00`)."),
    to_account: Cell.optional().describe("The new payee: an account id or its external id."),
    delivery: Cell.optional().describe("The new delivery preference (`standard`, `same_day`…)."),
    allowPossibleDuplicates: z
      .boolean()
      .optional()
      .describe(
        "Pay the corrected row even if it pays what another row of this batch or of a recent batch pays " +
          "(refused with `POSSIBLE_DUPLICATE` in `detail` otherwise). Recorded in the audit trail as " +
          "`batch.duplicates-confirmed`.",
      ),
  })
  .refine((b) => b.amount !== undefined || b.to_account !== undefined || b.delivery !== undefined, {
    message: "give at least one of amount, to_account, delivery",
  });

const Change = z.object({ field: z.string(), old: z.string(), new: z.string() });

export const CorrectAnswer = z.object({
  row: z.number().int(),
  outcome: z
    .enum(["retried", "held", "refused", "left-alone"])
    .describe(
      "`retried`: a new attempt started; `held`: it waits for approval, nothing is paid until then; " +
        "`refused`: the correction is invalid or the row may not be retried (see `detail`); " +
        "`left-alone`: the row changed meanwhile or its earlier attempt paid after all.",
    ),
  detail: z.string(),
  attempt: z.number().int().nullable(),
  externalId: z.string().nullable(),
  changes: z.array(Change).describe("Every sheet cell the correction changed."),
});

export function registerCorrectionRoutes(parent: FastifyInstance, ctx: ApiContext): void {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  app.post(
    "/api/v1/batches/:id/rows/:row/correct",
    {
      preValidation: allow("rows.retry"),
      schema: {
        tags: ["batches"],
        summary: "Correct a failed row's amount, payee or delivery and retry it (approvals apply)",
        params: RowParams,
        body: CorrectBody,
        response: { 200: CorrectAnswer, ...errors(404) },
      },
    },
    async (request) => {
      const { id, row } = request.params;
      if (!BATCH_ID_PATTERN.test(id)) throw new ApiError(404, "NOT_FOUND", `no batch ${id}`);
      if (!/^\d{1,9}$/.test(row)) throw new ApiError(404, "NOT_FOUND", `row ${row} is not a row number`);
      const batch = await ctx.store.getBatch(id);
      if (!batch) throw new ApiError(404, "NOT_FOUND", `no batch ${id}`);
      const record = await rowByNumber(ctx.store, id, Number(row));
      if (!record) throw new ApiError(404, "NOT_FOUND", `batch ${id} has no valid row ${row}`);
      const { amount, to_account, delivery, allowPossibleDuplicates } = request.body;
      const outcome = await passGate(gateOf(ctx, request), {
        kind: "correct-row",
        correct: {
          api: ctx.client,
          batch,
          row: record,
          edits: {
            ...(amount !== undefined ? { amount } : {}),
            ...(to_account !== undefined ? { to_account } : {}),
            ...(delivery !== undefined ? { delivery } : {}),
          },
        },
        allowPossibleDuplicates: allowPossibleDuplicates === true,
      });
      return {
        row: record.rowNumber,
        outcome: outcome.outcome,
        detail: outcome.detail,
        attempt: outcome.attempt ?? null,
        externalId: outcome.externalId ?? null,
        changes: outcome.changes ?? [],
      };
    },
  );
}
