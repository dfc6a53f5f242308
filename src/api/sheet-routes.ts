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
import { auditRequest } from "../audit/index.js";
import { allow, principalOf } from "../auth/index.js";
import { SheetReadError } from "../sheets/index.js";
import { ApiError } from "./api-error.js";
import type { ApiContext } from "./context.js";
import { cleanFileName, newUploadId, type UploadRecord, UploadStore, validateUpload } from "./uploads.js";

const SHEET_EXTENSIONS = new Set([".csv", ".txt", ".xlsx"]);

/** The answer for an upload (the stored record without server paths). */
export function uploadView(u: UploadRecord) {
  const { path: _path, reportPaths, ...rest } = u;
  return {
    ...rest,
    reportUrl: reportPaths ? `/api/v1/sheets/${u.id}/report.csv` : null,
  };
}

export function registerSheetRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const uploads = new UploadStore(ctx.redis, ctx.prefix);

  app.post("/api/v1/sheets", { preHandler: allow("sheets.upload") }, async (request, reply) => {
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
        } else if (part.fieldname === "sheet" && typeof part.value === "string" && part.value.trim() !== "") {
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
  });

  app.get<{ Params: { id: string } }>(
    "/api/v1/sheets/:id",
    { preHandler: allow("batches.read") },
    async (request) => {
      const upload = await uploads.get(request.params.id);
      if (!upload) throw new ApiError(404, "NOT_FOUND", `no upload ${request.params.id}`);
      return uploadView(upload);
    },
  );

  app.get<{ Params: { id: string; format: string } }>(
    "/api/v1/sheets/:id/report.:format",
    { preHandler: allow("batches.read") },
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
