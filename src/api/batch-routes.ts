/**
 * Batches: submit an uploaded sheet, list, get, rows (filtered, paged), one row with its history,
 * retry, cancel a scheduled payment, and the result file.
 */
import type { FastifyInstance } from "fastify";
import { auditRequest } from "../audit/index.js";
import { allow, principalOf } from "../auth/index.js";
import { DuplicateFileError, isRowState, type RowState } from "../batches/index.js";
import { PayoutsApiError } from "../payouts-api/index.js";
import { adoptedReason, retryRows } from "../retries/index.js";
import { BATCH_ID_PATTERN, BATCH_ID_SOURCE } from "../row-identity/index.js";
import type { ResultFileSource } from "../server/result-download.js";
import { submitSheet } from "../submission/index.js";
import { ApiError } from "./api-error.js";
import { batchViewOf, originKey } from "./batch-views.js";
import type { ApiContext } from "./context.js";
import { decodeCursor, pageRows, rowByNumber, rowView } from "./row-pages.js";
import { UploadStore } from "./uploads.js";

export interface BatchRouteOptions {
  resultFile?: ResultFileSource | undefined;
  sendResult: (
    reply: import("fastify").FastifyReply,
    source: ResultFileSource | undefined,
    batchId: string,
    format: "csv" | "xlsx",
  ) => Promise<void>;
}

/** A batch list cursor, once base64url-decoded: `<creation ms>.<batch id>`. */
const CURSOR_PATTERN = new RegExp(`^(\\d{1,16})\\.(${BATCH_ID_SOURCE})$`);

function limitOf(value: unknown, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new ApiError(400, "INVALID_REQUEST", `limit must be a whole number from 1 to ${max}`);
  }
  return n;
}

function batchIdOf(id: string): string {
  if (!BATCH_ID_PATTERN.test(id)) throw new ApiError(404, "NOT_FOUND", `no batch ${id}`);
  return id;
}

/**
 * Registers the batch routes. Long because it is a list of routes, each a few lines that read the
 * shared context; the work behind each is in its own module (submission, retries, row pages).
 */
export function registerBatchRoutes(app: FastifyInstance, ctx: ApiContext, options: BatchRouteOptions): void {
  const uploads = new UploadStore(ctx.redis, ctx.prefix);
  const { store } = ctx;

  async function progressOr404(id: string) {
    const p = await store.progress(batchIdOf(id));
    if (!p) throw new ApiError(404, "NOT_FOUND", `no batch ${id}`);
    return p;
  }

  app.post<{ Body: { sheetId?: unknown; onInvalid?: unknown } }>(
    "/api/v1/batches",
    { preHandler: allow("batches.submit") },
    async (request, reply) => {
      const { sheetId, onInvalid = "reject" } = request.body ?? {};
      if (typeof sheetId !== "string")
        throw new ApiError(400, "INVALID_REQUEST", "send { sheetId, onInvalid }");
      if (onInvalid !== "reject" && onInvalid !== "skip") {
        throw new ApiError(400, "INVALID_REQUEST", 'onInvalid is "reject" or "skip"');
      }
      const upload = await uploads.get(sheetId);
      if (!upload)
        throw new ApiError(404, "NOT_FOUND", `no uploaded sheet ${sheetId} (uploads are kept 30 days)`);
      let outcome: Awaited<ReturnType<typeof submitSheet>>;
      try {
        outcome = await submitSheet({
          sheetPath: upload.path,
          ...(upload.sheet ? { sheetName: upload.sheet } : {}),
          api: ctx.client,
          pipeline: ctx.pipeline,
          dataDir: ctx.dataDir,
          entityId: ctx.entityId,
          onInvalid,
          reportPath: upload.reportPaths?.csv ?? `${upload.path}.report.csv`,
          submittedBy: principalOf(request).name,
        });
      } catch (err) {
        if (err instanceof DuplicateFileError) {
          await auditRequest(ctx.audit, request, "batch.submit", sheetId, "denied", { code: err.code });
          throw new ApiError(409, "DUPLICATE_FILE", err.message.replace(/; submit it again.*$/, ""), {
            batchId: err.existingBatchId,
          });
        }
        throw err;
      }
      if (outcome.kind !== "submitted") {
        await auditRequest(ctx.audit, request, "batch.submit", sheetId, "denied", { outcome: outcome.kind });
        if (outcome.kind === "invalid") {
          throw new ApiError(
            422,
            "ROWS_INVALID",
            `${outcome.summary.invalidRows} of ${outcome.summary.rows} rows are invalid; fix them, or submit with onInvalid "skip"`,
            { invalidRows: outcome.summary.invalidRows, rows: outcome.summary.rows },
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
      await auditRequest(ctx.audit, request, "batch.submit", outcome.batchId, "ok", {
        sheetId,
        onInvalid,
        rows: outcome.summary.validRows,
      });
      const p = await store.progress(outcome.batchId);
      const state = outcome.awaitingApproval
        ? "awaiting-approval"
        : p
          ? (await batchViewOf(store, ctx.prefix, p)).state
          : "submitting";
      return reply.code(201).send({ id: outcome.batchId, state });
    },
  );

  app.get<{ Querystring: { limit?: string; cursor?: string } }>(
    "/api/v1/batches",
    { preHandler: allow("batches.read") },
    async (request) => {
      const limit = limitOf(request.query.limit, 20, 100);
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

  app.get<{ Params: { id: string } }>(
    "/api/v1/batches/:id",
    { preHandler: allow("batches.read") },
    async (request) => {
      const p = await progressOr404(request.params.id);
      return batchViewOf(store, ctx.prefix, p);
    },
  );

  app.get<{
    Params: { id: string };
    Querystring: { state?: string; q?: string; limit?: string; cursor?: string };
  }>("/api/v1/batches/:id/rows", { preHandler: allow("batches.read") }, async (request) => {
    const p = await progressOr404(request.params.id);
    const { state, q, cursor } = request.query;
    let states: Set<RowState> | undefined;
    if (state) {
      const list = state.split(",").map((s) => s.trim());
      const bad = list.find((s) => !isRowState(s));
      if (bad !== undefined) throw new ApiError(400, "INVALID_REQUEST", `state "${bad}" is not a row state`);
      states = new Set(list as RowState[]);
    }
    const decoded = cursor ? decodeCursor(cursor) : undefined;
    if (cursor && !decoded) throw new ApiError(400, "INVALID_REQUEST", "cursor is not one this server gave");
    return pageRows(store, p.batch.id, {
      limit: limitOf(request.query.limit, 50, 500),
      cursor: decoded,
      filter: { states, q: q?.trim() ? q.trim().slice(0, 200) : undefined },
    });
  });

  async function rowOr404(id: string, row: string) {
    const batchId = batchIdOf(id);
    if (!/^\d{1,9}$/.test(row)) throw new ApiError(404, "NOT_FOUND", `row ${row} is not a row number`);
    if (!(await store.getBatch(batchId))) throw new ApiError(404, "NOT_FOUND", `no batch ${id}`);
    const record = await rowByNumber(store, batchId, Number(row));
    if (!record) throw new ApiError(404, "NOT_FOUND", `batch ${batchId} has no valid row ${row}`);
    return record;
  }

  app.get<{ Params: { id: string; row: string } }>(
    "/api/v1/batches/:id/rows/:row",
    { preHandler: allow("batches.read") },
    async (request) => {
      const r = await rowOr404(request.params.id, request.params.row);
      return { ...rowView(r), paymentStatus: r.paymentStatus ?? null, history: r.history };
    },
  );

  app.post<{ Params: { id: string }; Body: { rows?: unknown } | undefined }>(
    "/api/v1/batches/:id/retry",
    { preHandler: allow("rows.retry") },
    async (request) => {
      const batchId = batchIdOf(request.params.id);
      const rows = request.body?.rows;
      if (rows !== undefined && (!Array.isArray(rows) || !rows.every((n) => Number.isInteger(n) && n > 0))) {
        throw new ApiError(400, "INVALID_REQUEST", "rows is a list of row numbers, e.g. [3, 7]");
      }
      const result = await retryRows({
        store,
        enqueuer: ctx.enqueuer,
        batchId,
        // Rows in `error` are resolved against the ledger before they are paid again (issue 13).
        ledger: ctx.client,
        ...(rows ? { rows: rows as number[] } : {}),
        note: `operator retry by ${principalOf(request).name}`,
      });
      if (result.kind === "unknown-batch") throw new ApiError(404, "NOT_FOUND", `no batch ${batchId}`);
      const answer = {
        retried: result.retried.map((r) => r.rowNumber),
        leftAlone: [
          ...result.adopted.map((a) => ({ row: a.rowNumber, reason: adoptedReason(a) })),
          ...result.leftAlone.map((l) => ({ row: l.rowNumber, reason: l.reason })),
        ],
      };
      await auditRequest(ctx.audit, request, "rows.retry", batchId, "ok", answer);
      return answer;
    },
  );

  app.post<{ Params: { id: string; row: string } }>(
    "/api/v1/batches/:id/rows/:row/cancel",
    { preHandler: allow("rows.cancel") },
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

  app.get<{ Params: { id: string; format: string } }>(
    "/api/v1/batches/:id/result.:format",
    { preHandler: allow("batches.read") },
    async (request, reply) => {
      const { id, format } = request.params;
      if (format !== "csv" && format !== "xlsx")
        throw new ApiError(404, "NOT_FOUND", "results are .csv or .xlsx");
      await options.sendResult(reply, options.resultFile, batchIdOf(id), format);
    },
  );
}
