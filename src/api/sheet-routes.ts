/**
 * `POST /api/v1/sheets` (multipart: `file`, optional `sheet`): store, validate, answer with counts,
 * totals per currency and problems; nothing is queued. `GET /api/v1/sheets/{id}` answers the same
 * again; `GET /api/v1/sheets/{id}/report.csv|.xlsx` is the validation report.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { auditRequest } from "../audit/index.js";
import { allow, principalOf } from "../auth/index.js";
import { SheetReadError } from "../sheets/index.js";
import { ApiError } from "./api-error.js";
import type { ApiContext } from "./context.js";
import { errors, MULTIPART_SHEET_BODY, UploadView } from "./schemas.js";
import { cleanFileName, newUploadId, type UploadRecord, UploadStore, validateUpload } from "./uploads.js";

const SHEET_EXTENSIONS = new Set([".csv", ".txt", ".xlsx"]);

/** The answer for an upload (the stored record without server paths). */
export function uploadView(u: UploadRecord): z.output<typeof UploadView> {
  const { path: _path, reportPaths, ...rest } = u;
  return {
    ...rest,
    reportUrl: reportPaths ? `/api/v1/sheets/${u.id}/report.csv` : null,
  };
}

export function registerSheetRoutes(parent: FastifyInstance, ctx: ApiContext): void {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const uploads = new UploadStore(ctx.redis, ctx.prefix);
  const tags = ["sheets"];
  const IdParams = z.object({ id: z.string().max(100).describe("The upload's id (`upl_…`).") });

  app.post(
    "/api/v1/sheets",
    {
      preValidation: allow("sheets.upload"),
      config: { multipartBody: MULTIPART_SHEET_BODY },
      schema: {
        tags,
        summary: "Upload a sheet and validate it against the live accounts; nothing is queued",
        consumes: ["multipart/form-data"],
        response: { 201: UploadView, ...errors(400, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      if (!request.isMultipart()) {
        throw new ApiError(
          415,
          "UNSUPPORTED_MEDIA_TYPE",
          "send the sheet as multipart/form-data, field `file`",
        );
      }
      const id = newUploadId();
      const dir = path.join(ctx.dataDir, "uploads", id);
      let filePath: string | undefined;
      let fileName = "";
      let sheet: string | undefined;
      try {
        for await (const part of request.parts()) {
          if (part.type === "file") {
            if (part.fieldname !== "file" || filePath) {
              part.file.resume();
              continue;
            }
            fileName = cleanFileName(part.filename || "sheet.csv");
            const ext = path.extname(fileName).toLowerCase();
            if (!SHEET_EXTENSIONS.has(ext)) {
              part.file.resume();
              throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", `${fileName}: send a .csv or .xlsx sheet`);
            }
            await mkdir(dir, { recursive: true });
            filePath = path.join(dir, fileName);
            await pipeline(part.file, createWriteStream(filePath, { flags: "wx" }));
          } else if (
            part.fieldname === "sheet" &&
            typeof part.value === "string" &&
            part.value.trim() !== ""
          ) {
            sheet = part.value.trim().slice(0, 200);
          }
        }
        if (!filePath) throw new ApiError(400, "FILE_MISSING", "no file in the field `file`");
        const validated = await validateUpload(filePath, { api: ctx.client, sheet });
        const record: UploadRecord = {
          id,
          fileName,
          sheet,
          path: filePath,
          ...validated,
          uploadedBy: principalOf(request).name,
          uploadedAt: new Date().toISOString(),
        };
        await uploads.save(record);
        await auditRequest(ctx.audit, request, "sheet.upload", id, "ok", {
          fileName,
          rows: record.rows,
          invalidRows: record.invalidRows,
        });
        return reply.code(201).send(uploadView(record));
      } catch (err) {
        await rm(dir, { recursive: true, force: true });
        await auditRequest(ctx.audit, request, "sheet.upload", id, "failed", {
          fileName,
          error: err instanceof ApiError || err instanceof SheetReadError ? err.code : "ERROR",
        });
        if (err instanceof SheetReadError)
          throw new ApiError(422, "SHEET_UNREADABLE", `${fileName}: ${err.message}`);
        throw err;
      }
    },
  );

  app.get(
    "/api/v1/sheets/:id",
    {
      preValidation: allow("batches.read"),
      schema: {
        tags,
        summary: "An upload's validation again (uploads are kept 30 days)",
        params: IdParams,
        response: { 200: UploadView, ...errors(404) },
      },
    },
    async (request) => {
      const upload = await uploads.get(request.params.id);
      if (!upload) throw new ApiError(404, "NOT_FOUND", `no upload ${request.params.id}`);
      return uploadView(upload);
    },
  );

  app.get(
    "/api/v1/sheets/:id/report.:format",
    {
      preValidation: allow("batches.read"),
      schema: {
        tags,
        summary: "An upload's validation report (CSV or XLSX; 404 when it had no problems)",
        params: IdParams.extend({ format: z.string().describe("`csv` or `xlsx`.") }),
        produces: ["text/csv", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
        response: { 200: z.any().describe("The file."), ...errors(404) },
      },
    },
    async (request, reply) => {
      const { id, format } = request.params;
      const upload = await uploads.get(id);
      if (!upload) throw new ApiError(404, "NOT_FOUND", `no upload ${id}`);
      if (format !== "csv" && format !== "xlsx")
        throw new ApiError(404, "NOT_FOUND", "reports are .csv or .xlsx");
      if (!upload.reportPaths)
        throw new ApiError(404, "NOT_FOUND", `${upload.fileName} has no problems to report`);
      const name = `${path.basename(upload.fileName, path.extname(upload.fileName))}-report.${format}`;
      return reply
        .header(
          "content-type",
          format === "csv"
            ? "text/csv; charset=utf-8"
            : "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        )
        .header("content-disposition", `attachment; filename="${name}"`)
        .send(createReadStream(upload.reportPaths[format]));
    },
  );
}

export { UploadStore };
