/**
 * Batches: submit an uploaded sheet, list, get, rows (in sheet order, jumped into, filtered, searched),
 * one row with its history, retry, cancel a scheduled payment, and the result file. Every route states
 * its shapes in schemas.ts; Fastify validates requests by them.
 */
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { auditRequest } from "../audit/index.js";
import { allow, principalOf } from "../auth/index.js";
import {
  DuplicateFileError,
  decodeScanCursor,
  encodeScanCursor,
  isRowState,
  type RowState,
  rowsOfPage,
  scanRows,
} from "../batches/index.js";
import { passGate } from "../gate/index.js";
import { PayoutsApiError } from "../payouts-api/index.js";
import { adoptedReason } from "../retries/index.js";
import { BATCH_ID_PATTERN, BATCH_ID_SOURCE } from "../row-identity/index.js";
import type { ResultFileSource } from "../server/result-download.js";
import type { SubmitSheetOutcome } from "../submission/index.js";
import { MappingMemory, sheetToSubmit, UploadStore } from "../uploads/index.js";
import { ApiError } from "./api-error.js";
import { batchViewOf, originKey } from "./batch-views.js";
import type { ApiContext } from "./context.js";
import { declaredFromRequest } from "./declared-totals.js";
import { gateOf } from "./gate-caller.js";
import type { PayeeDirectory } from "./payee-directory.js";
import { invalidRowsByNumber, invalidRowView, rowByNumber, rowView } from "./row-views.js";
import {
  BatchIdParams,
  BatchList,
  BatchView,
  Cursor,
  errors,
  Limit,
  RetryBody,
  RowDetail,
  RowParams,
  RowsPage,
  RowsQuery,
  SubmitBody,
} from "./schemas.js";

export interface BatchRouteOptions {
  resultFile?: ResultFileSource | undefined;
  sendResult: (
    reply: import("fastify").FastifyReply,
    source: ResultFileSource | undefined,
    batchId: string,
    format: "csv" | "xlsx",
  ) => Promise<void>;
  payees: PayeeDirectory;
}

/** A batch list cursor, once base64url-decoded: `<creation ms>.<batch id>`. */
const CURSOR_PATTERN = new RegExp(`^(\\d{1,16})\\.(${BATCH_ID_SOURCE})$`);

function batchIdOf(id: string): string {
  if (!BATCH_ID_PATTERN.test(id)) throw new ApiError(404, "NOT_FOUND", `no batch ${id}`);
  return id;
}

/**
 * Registers the batch routes. Long because it is a list of routes, each a few lines that read the
 * shared context; the work behind each is in its own module (submission, retries, row scans).
 */
export function registerBatchRoutes(
  parent: FastifyInstance,
  ctx: ApiContext,
  options: BatchRouteOptions,
): void {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const uploads = new UploadStore(ctx.redis, ctx.prefix, ctx.uploadKeep);
  const uploadContext = { store: uploads, memory: new MappingMemory(ctx.redis, ctx.prefix), api: ctx.client };
  const { store } = ctx;
  const tags = ["batches"];

  async function progressOr404(id: string) {
    const p = await store.progress(batchIdOf(id));
    if (!p) throw new ApiError(404, "NOT_FOUND", `no batch ${id}`);
    return p;
  }

  app.post(
    "/api/v1/batches",
    {
      preValidation: allow("batches.submit"),
      schema: {
        tags,
        summary: "Submit an uploaded sheet as a batch (as `payouts submit`)",
        body: SubmitBody,
        response: {
          201: z.object({ id: z.string(), state: z.string() }),
          ...errors(404, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const { sheetId, onInvalid, allowPossibleDuplicates, expectRows, expectTotals } = request.body;
      const upload = await uploads.get(sheetId);
      if (!upload) throw new ApiError(404, "NOT_FOUND", uploads.goneMessage(sheetId));
      const declared =
        expectRows === undefined && expectTotals === undefined
          ? upload.declared
          : declaredFromRequest(expectRows, expectTotals);
      let outcome: SubmitSheetOutcome;
      try {
        // Rows corrected in the console are written into the sheet first: what is archived and paid is
        // the corrected sheet, validated again as a whole. Through the one gate: approvals, audit.
        const sheetPath = await sheetToSubmit(uploadContext, upload);
        outcome = await passGate(gateOf(ctx, request), {
          kind: "submit",
          sheet: {
            sheetPath,
            ...(upload.sheet ? { sheetName: upload.sheet } : {}),
            api: ctx.client,
            pipeline: ctx.pipeline,
            entityId: ctx.entityId,
            onInvalid,
            allowPossibleDuplicates,
            reportPath: `${sheetPath}.submit-report.csv`,
            ...(declared ? { declared } : {}),
          },
        });
      } catch (err) {
        if (err instanceof DuplicateFileError) {
          throw new ApiError(409, "DUPLICATE_FILE", err.message.replace(/; submit it again.*$/, ""), {
            batchId: err.existingBatchId,
          });
        }
        throw err;
      }
      if (outcome.kind !== "submitted") {
        const control = outcome.summary.problems.filter((p) => p.code.startsWith("CONTROL_"));
        if (outcome.kind === "invalid" && control.length > 0) {
          throw new ApiError(422, control[0]!.code, control.map((p) => p.message).join("; "), {
            problems: control,
          });
        }
        if (outcome.kind === "invalid") {
          const possibleDuplicates = outcome.summary.countsByCode.get("POSSIBLE_DUPLICATE") ?? 0;
          throw new ApiError(
            422,
            "ROWS_INVALID",
            `${outcome.summary.invalidRows} of ${outcome.summary.rows} rows are invalid; fix them, or submit with onInvalid "skip"` +
              (possibleDuplicates > 0
                ? `; ${possibleDuplicates} are possible duplicates: if they are meant to be paid, submit with allowPossibleDuplicates`
                : ""),
            {
              invalidRows: outcome.summary.invalidRows,
              rows: outcome.summary.rows,
              possibleDuplicates,
              problems: outcome.summary.problems
                .filter((p) => p.code === "POSSIBLE_DUPLICATE")
                .slice(0, 20)
                .map((p) => ({ row: p.row, message: p.message })),
            },
          );
        }
        throw new ApiError(422, "NOTHING_TO_PAY", "the sheet has no valid row to pay");
      }
      await store.redis.hset(originKey(ctx.prefix, outcome.batchId), {
        createdBy: principalOf(request).name,
        fileName: upload.fileName,
        uploadId: upload.id,
      });
      await uploads.save({ ...upload, batchId: outcome.batchId });
      // The batch has its own rows now; the upload's copy for the console is no longer needed.
      await uploads.clearRows(upload.id);
      const p = await store.progress(outcome.batchId);
      const state = outcome.awaitingApproval
        ? "awaiting-approval"
        : p
          ? (await batchViewOf(store, ctx.prefix, p)).state
          : "submitting";
      return reply.code(201).send({ id: outcome.batchId, state });
    },
  );

  app.get(
    "/api/v1/batches",
    {
      preValidation: allow("batches.read"),
      schema: {
        tags,
        summary: "List batches, newest first",
        querystring: z.object({ limit: Limit(20, 100), cursor: Cursor }),
        response: { 200: BatchList, ...errors(400) },
      },
    },
    async (request) => {
      const limit = request.query.limit;
      let max = "+inf";
      let after: { score: string; id: string } | undefined;
      if (request.query.cursor) {
        const m = CURSOR_PATTERN.exec(Buffer.from(request.query.cursor, "base64url").toString("latin1"));
        if (!m) throw new ApiError(400, "INVALID_REQUEST", "cursor is not one this server gave");
        after = { score: m[1]!, id: m[2]! };
        max = after.score;
      }
      // Ties on the creation millisecond are ordered by id (ZREVRANGEBYSCORE order), so a cursor of
      // (score, id) resumes exactly after the last batch handed out.
      const flat = await store.redis.zrevrangebyscore(
        store.keys.batches,
        max,
        "-inf",
        "WITHSCORES",
        "LIMIT",
        0,
        limit + 64,
      );
      const entries: { id: string; score: string }[] = [];
      for (let i = 0; i < flat.length; i += 2) entries.push({ id: flat[i]!, score: flat[i + 1]! });
      const fresh = after ? entries.filter((e) => e.score !== after.score || e.id < after.id) : entries;
      const page = fresh.slice(0, limit);
      const data = [];
      for (const e of page) {
        const p = await store.progress(e.id);
        if (p) data.push(await batchViewOf(store, ctx.prefix, p));
      }
      const last = page.at(-1);
      const more = fresh.length > limit || (fresh.length === limit && entries.length > page.length);
      return {
        data,
        nextCursor: more && last ? Buffer.from(`${last.score}.${last.id}`).toString("base64url") : null,
      };
    },
  );

  app.get(
    "/api/v1/batches/:id",
    {
      preValidation: allow("batches.read"),
      schema: {
        tags,
        summary: "One batch: state, counts, money per currency and state, approval",
        params: BatchIdParams,
        response: { 200: BatchView, ...errors(404) },
      },
    },
    async (request) => {
      const p = await progressOr404(request.params.id);
      return batchViewOf(store, ctx.prefix, p);
    },
  );

  app.get(
    "/api/v1/batches/:id/rows",
    {
      preValidation: allow("batches.read"),
      schema: {
        tags,
        summary: "A batch's rows: in sheet order, from any position, filtered by state, or searched",
        description:
          "Without a filter a page is read straight from the sheet order (`offset` jumps). With `state` or `q` the rows are matched inside Redis within a budget per request: a page may be short, even empty, while `nextCursor` is set; keep following it (`reached` says how far the search got).",
        params: BatchIdParams,
        querystring: RowsQuery,
        response: { 200: RowsPage, ...errors(400, 404) },
      },
    },
    async (request) => {
      const p = await progressOr404(request.params.id);
      const batchId = p.batch.id;
      const { state, limit, offset } = request.query;
      const q = request.query.q?.trim() || undefined;
      const list = state
        ? state
            .split(",")
            .map((s) => s.trim())
            .filter((s) => s !== "")
        : [];
      const invalid = list.includes("invalid");
      if (invalid && list.length > 1) {
        throw new ApiError(
          400,
          "INVALID_REQUEST",
          "state=invalid lists the invalid rows; it cannot be combined",
        );
      }
      const bad = list.find((s) => s !== "invalid" && !isRowState(s));
      if (bad !== undefined) throw new ApiError(400, "INVALID_REQUEST", `state "${bad}" is not a row state`);
      const states = invalid || list.length === 0 ? undefined : new Set(list as RowState[]);
      const cursor = request.query.cursor ? decodeScanCursor(request.query.cursor) : undefined;
      if (request.query.cursor && !cursor) {
        throw new ApiError(400, "INVALID_REQUEST", "cursor is not one this server gave");
      }
      const payeeIds = q && !invalid ? await options.payees.idsMatching(q) : undefined;
      const page = await scanRows(store, batchId, { states, invalid, q, payeeIds, limit, offset, cursor });
      let data: z.output<typeof RowsPage>["data"];
      if (invalid) {
        const rows = await invalidRowsByNumber(store, batchId, page.keys);
        data = rows.map((r) => invalidRowView(r, p.batch.createdAt));
      } else {
        const [rows, payees, view] = await Promise.all([
          rowsOfPage(store, batchId, page),
          options.payees.entries(),
          batchViewOf(store, ctx.prefix, p),
        ]);
        const context = { payees, heldForApproval: view.state === "awaiting-approval", now: Date.now() };
        data = rows.map((r) => rowView(r, context));
      }
      // Without a search the number of matches is known from the counters.
      const total = q ? null : states ? [...states].reduce((n, s) => n + (p.counts[s] ?? 0), 0) : page.size;
      return {
        data,
        nextCursor: page.next ? encodeScanCursor(page.next) : null,
        total,
        rows: page.size,
        offset: page.offset,
        reached: page.reached,
      };
    },
  );

  async function rowOr404(id: string, row: string) {
    const batchId = batchIdOf(id);
    if (!/^\d{1,9}$/.test(row)) throw new ApiError(404, "NOT_FOUND", `row ${row} is not a row number`);
    if (!(await store.getBatch(batchId))) throw new ApiError(404, "NOT_FOUND", `no batch ${id}`);
    const record = await rowByNumber(store, batchId, Number(row));
    if (!record) throw new ApiError(404, "NOT_FOUND", `batch ${batchId} has no valid row ${row}`);
    return record;
  }

  app.get(
    "/api/v1/batches/:id/rows/:row",
    {
      preValidation: allow("batches.read"),
      schema: {
        tags,
        summary: "One row by its sheet row number, with its history",
        params: RowParams,
        response: { 200: RowDetail, ...errors(404) },
      },
    },
    async (request) => {
      const r = await rowOr404(request.params.id, request.params.row);
      const [payees, p] = await Promise.all([options.payees.entries(), progressOr404(r.batchId)]);
      const view = await batchViewOf(store, ctx.prefix, p);
      const context = { payees, heldForApproval: view.state === "awaiting-approval", now: Date.now() };
      return { ...rowView(r, context), history: r.history };
    },
  );

  app.post(
    "/api/v1/batches/:id/retry",
    {
      preValidation: allow("rows.retry"),
      schema: {
        tags,
        summary: "A new attempt for failed, rejected, canceled or error rows (as `payouts retry`)",
        params: BatchIdParams,
        body: RetryBody,
        response: {
          200: z.object({
            retried: z.array(z.number().int()),
            leftAlone: z.array(z.object({ row: z.number().int(), reason: z.string() })),
          }),
          ...errors(400, 404),
        },
      },
    },
    async (request) => {
      const batchId = batchIdOf(request.params.id);
      const rows = request.body?.rows;
      const result = await passGate(gateOf(ctx, request), {
        kind: "retry",
        retry: {
          batchId,
          // Rows in `error` are resolved against the ledger before they are paid again.
          ledger: ctx.client,
          ...(rows ? { rows } : {}),
          note: `operator retry by ${principalOf(request).name}`,
        },
      });
      if (result.kind === "unknown-batch") throw new ApiError(404, "NOT_FOUND", `no batch ${batchId}`);
      const answer = {
        retried: result.retried.map((r) => r.rowNumber),
        leftAlone: [
          ...result.adopted.map((a) => ({ row: a.rowNumber, reason: adoptedReason(a) })),
          ...result.leftAlone.map((l) => ({ row: l.rowNumber, reason: l.reason })),
        ],
      };
      return answer;
    },
  );

  app.post(
    "/api/v1/batches/:id/rows/:row/cancel",
    {
      preValidation: allow("rows.cancel"),
      schema: {
        tags,
        summary: "Cancel a row's payment while the service still has it scheduled",
        params: RowParams,
        response: {
          200: z.object({ row: z.number().int(), paymentId: z.string(), paymentStatus: z.string() }),
          ...errors(404, 409),
        },
      },
    },
    async (request) => {
      const r = await rowOr404(request.params.id, request.params.row);
      const target = `${r.batchId}/${r.rowNumber}`;
      if (!r.paymentId) {
        await auditRequest(ctx.audit, request, "row.cancel", target, "denied", { state: r.state });
        throw new ApiError(
          409,
          "NOT_CANCELABLE",
          `row ${r.rowNumber} has no payment to cancel (it is ${r.state})`,
        );
      }
      try {
        const payment = await ctx.client.payments.cancel(r.paymentId);
        await ctx.reconcile.enqueue({ kind: "payment", paymentId: r.paymentId, origin: "sweep" });
        await auditRequest(ctx.audit, request, "row.cancel", target, "ok", { paymentId: r.paymentId });
        return { row: r.rowNumber, paymentId: payment.id, paymentStatus: payment.status };
      } catch (err) {
        if (err instanceof PayoutsApiError && err.status >= 400 && err.status < 500) {
          await auditRequest(ctx.audit, request, "row.cancel", target, "denied", { code: err.code });
          throw new ApiError(409, err.code || "NOT_CANCELABLE", err.message);
        }
        throw err;
      }
    },
  );

  app.get(
    "/api/v1/batches/:id/result.:format",
    {
      preValidation: allow("batches.read"),
      schema: {
        tags,
        summary: "The batch's result file (CSV or XLSX), at most a couple of seconds old",
        params: BatchIdParams.extend({ format: z.string().describe("`csv` or `xlsx`.") }),
        produces: ["text/csv", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
        response: { 200: z.any().describe("The file."), ...errors(404) },
      },
    },
    async (request, reply) => {
      const { id, format } = request.params;
      if (format !== "csv" && format !== "xlsx")
        throw new ApiError(404, "NOT_FOUND", "results are .csv or .xlsx");
      await options.sendResult(reply, options.resultFile, batchIdOf(id), format);
    },
  );
}
