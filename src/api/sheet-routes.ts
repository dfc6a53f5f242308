/**
 * Uploads: `POST /api/v1/sheets` (multipart: `file`, the sheet or a .zip of it and its files;
 * `attachments`, files its attachment column names; optional `sheet`) stores and validates, queuing
 * nothing. Then the upload's rows page by page (problems first), rows corrected and checked again at
 * once, the columns mapped when the headers are not ours, the validation report, and the template.
 * The work is src/uploads'; these routes read requests and say what happened.
 */
import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { packageFile } from "../assets/index.js";
import { auditRequest } from "../audit/index.js";
import { allow, principalOf } from "../auth/index.js";
import type { DeclaredTotals } from "../intake/index.js";
import { formatMinorOrRaw } from "../money/index.js";
import { SheetReadError } from "../sheets/index.js";
import {
  AttachmentUploadError,
  applyMapping,
  EditError,
  editRows,
  MAPPABLE_COLUMNS,
  MappingError,
  MappingMemory,
  placeAttachments,
  safeRelativePath,
  type UploadContext,
  type UploadRecord,
  UploadStore,
  unpackZip,
  uploadRows,
  uploadRowViews,
  validateNewUpload,
} from "../uploads/index.js";
import { ApiError } from "./api-error.js";
import type { ApiContext } from "./context.js";
import { declaredFromRequest, declaredView } from "./declared-totals.js";
import {
  errors,
  MappingBody,
  MULTIPART_SHEET_BODY,
  RowEditsBody,
  UploadRow,
  UploadRowsPage,
  UploadRowsQuery,
  UploadView,
} from "./schemas.js";

const SHEET_EXTENSIONS = new Set([".csv", ".txt", ".xlsx"]);
const UPLOAD_ID_PREFIX = "upl_";

export function newUploadId(): string {
  return `${UPLOAD_ID_PREFIX}${randomBytes(10).toString("hex")}`;
}

/** A name safe on every file system and in a header: ASCII letters, digits, `.`, `-`, `_`. */
export function cleanFileName(name: string): string {
  const base = path
    .basename(name.replaceAll("\\", "/"))
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^\.+/, "");
  const ext = path.extname(base).toLowerCase();
  const stem = base.slice(0, base.length - ext.length).slice(0, 80) || "sheet";
  return `${stem}${ext}`;
}

const money = formatMinorOrRaw;

/** The answer for an upload (the stored record without server paths). */
export function uploadView(u: UploadRecord): z.output<typeof UploadView> {
  return {
    id: u.id,
    fileName: u.fileName,
    format: u.format,
    ...(u.sheet ? { sheet: u.sheet } : {}),
    rows: u.rows,
    validRows: u.validRows,
    invalidRows: u.invalidRows,
    totals: u.totals.map((t) => ({ currency: t.currency, rows: t.rows, amount: money(t.minor, t.currency) })),
    problemCount: u.rowProblems + u.sheetProblems.length + (u.controlProblems?.length ?? 0),
    sheetProblems: [...(u.controlProblems ?? []), ...u.sheetProblems],
    declared: declaredView(u.declared),
    columns: u.header.columns.map((c) => c.original),
    needsMapping: u.sheetProblems.some((p) => p.code === "COLUMN_MISSING" || p.code === "HEADER_NOT_FOUND"),
    ourColumns: [...MAPPABLE_COLUMNS],
    mapping: u.mapping ?? null,
    attachments: u.attachments,
    editedRows: u.editedRows,
    uploadedBy: u.uploadedBy,
    uploadedAt: u.uploadedAt,
    ...(u.batchId ? { batchId: u.batchId } : {}),
    reportUrl: u.reportPaths ? `/api/v1/sheets/${u.id}/report.csv` : null,
  };
}

/** Stores the request's parts in `dir`: the sheet (or a .zip of it and its files) and attachments. */
async function receiveParts(
  request: FastifyRequest,
  dir: string,
  maxBytes: number,
): Promise<{
  fileName: string;
  sheetPath: string;
  attachments: string[];
  sheet: string | undefined;
  declared: DeclaredTotals | undefined;
}> {
  let sheetPath: string | undefined;
  let expectRows: number | undefined;
  const expectTotals: string[] = [];
  let zipPath: string | undefined;
  let fileName = "";
  let sheet: string | undefined;
  const attachments: string[] = [];
  await mkdir(dir, { recursive: true });
  for await (const part of request.parts()) {
    if (part.type === "file") {
      if (part.fieldname === "file" && !sheetPath && !zipPath) {
        fileName = cleanFileName(part.filename || "sheet.csv");
        const ext = path.extname(fileName).toLowerCase();
        if (ext === ".zip") {
          zipPath = path.join(dir, ".upload.zip");
          await pipeline(part.file, createWriteStream(zipPath, { flags: "wx" }));
          continue;
        }
        if (!SHEET_EXTENSIONS.has(ext)) {
          part.file.resume();
          throw new ApiError(
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            `${fileName}: send a .csv or .xlsx sheet, or a .zip of it and its files`,
          );
        }
        sheetPath = path.join(dir, fileName);
        await pipeline(part.file, createWriteStream(sheetPath, { flags: "wx" }));
      } else if (part.fieldname === "attachments") {
        const name = safeRelativePath(path.basename((part.filename || "").replaceAll("\\", "/")));
        if (!name || SHEET_EXTENSIONS.has(path.extname(name).toLowerCase()) || attachments.includes(name)) {
          part.file.resume();
          continue;
        }
        await pipeline(part.file, createWriteStream(path.join(dir, name), { flags: "wx" }));
        attachments.push(name);
      } else {
        part.file.resume();
      }
    } else if (part.fieldname === "sheet" && typeof part.value === "string" && part.value.trim() !== "") {
      sheet = part.value.trim().slice(0, 200);
    } else if (
      part.fieldname === "expectRows" &&
      typeof part.value === "string" &&
      part.value.trim() !== ""
    ) {
      if (!/^\d{1,9}$/.test(part.value.trim()))
        throw new ApiError(400, "INVALID_REQUEST", "expectRows: a whole number of rows");
      expectRows = Number(part.value.trim());
    } else if (
      part.fieldname === "expectTotals" &&
      typeof part.value === "string" &&
      part.value.trim() !== ""
    ) {
      if (expectTotals.length >= 50) throw new ApiError(400, "INVALID_REQUEST", "expectTotals: at most 50");
      expectTotals.push(
        ...part.value
          .split(/[\n;]/)
          .map((t) => t.trim())
          .filter((t) => t !== "")
          .slice(0, 50),
      );
    }
  }
  const declared = declaredFromRequest(expectRows, expectTotals);
  if (zipPath) {
    const unpacked = await unpackZip(zipPath, path.join(dir, "zip"), maxBytes);
    await rm(zipPath, { force: true });
    const name = path.basename(unpacked.sheetPath);
    return {
      fileName: cleanFileName(name),
      sheetPath: unpacked.sheetPath,
      attachments: unpacked.files,
      sheet,
      declared,
    };
  }
  if (!sheetPath) throw new ApiError(400, "FILE_MISSING", "no file in the field `file`");
  return { fileName, sheetPath, attachments, sheet, declared };
}

/**
 * Registers the sheet routes. Long because it is a list of routes; the work behind each is in
 * src/uploads.
 */
export function registerSheetRoutes(parent: FastifyInstance, ctx: ApiContext): void {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const store = new UploadStore(ctx.redis, ctx.prefix, ctx.uploadKeep);
  const uploads: UploadContext = { store, memory: new MappingMemory(ctx.redis, ctx.prefix), api: ctx.client };
  const tags = ["sheets"];
  const IdParams = z.object({ id: z.string().max(100).describe("The upload's id (`upl_…`).") });

  async function uploadOr404(id: string): Promise<UploadRecord> {
    const upload = await store.get(id);
    if (!upload) throw new ApiError(404, "NOT_FOUND", store.goneMessage(id));
    return upload;
  }
  function notSubmitted(upload: UploadRecord): void {
    if (upload.batchId) {
      throw new ApiError(
        409,
        "ALREADY_SUBMITTED",
        `${upload.fileName} was submitted as batch ${upload.batchId}`,
        {
          batchId: upload.batchId,
        },
      );
    }
  }

  app.post(
    "/api/v1/sheets",
    {
      preValidation: allow("sheets.upload"),
      config: { multipartBody: MULTIPART_SHEET_BODY },
      schema: {
        tags,
        summary:
          "Upload a sheet (and its attachment files, or a .zip of both) and validate it; nothing is queued",
        consumes: ["multipart/form-data"],
        response: { 201: UploadView, ...errors(413, 415, 422) },
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
      const dir = path.join(ctx.pipeline.dataDir, "uploads", id);
      let fileName = "";
      try {
        const received = await receiveParts(request, dir, ctx.uploadLimitBytes * 4);
        fileName = received.fileName;
        const attachments = await placeAttachments(received.sheetPath, received.attachments, {
          sheet: received.sheet,
        });
        const record = await validateNewUpload(uploads, {
          id,
          fileName,
          sheet: received.sheet,
          path: received.sheetPath,
          attachments,
          uploadedBy: principalOf(request).name,
          uploadedAt: new Date().toISOString(),
          ...(received.declared ? { declared: received.declared } : {}),
        });
        await store.save(record);
        await auditRequest(ctx.audit, request, "sheet.upload", id, "ok", {
          fileName,
          rows: record.rows,
          invalidRows: record.invalidRows,
          attachments: attachments.length,
        });
        return reply.code(201).send(uploadView(record));
      } catch (err) {
        await rm(dir, { recursive: true, force: true });
        await store.clearRows(id);
        await auditRequest(ctx.audit, request, "sheet.upload", id, "failed", {
          fileName,
          error: err instanceof ApiError || err instanceof SheetReadError ? err.code : "ERROR",
        });
        if (err instanceof SheetReadError)
          throw new ApiError(422, "SHEET_UNREADABLE", `${fileName}: ${err.message}`);
        if (err instanceof AttachmentUploadError)
          throw new ApiError(422, "ATTACHMENTS_UNREADABLE", err.message);
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
        summary:
          "An upload's validation again (kept UPLOAD_KEEP_HOURS until submitted, UPLOAD_KEEP_SUBMITTED_DAYS after)",
        params: IdParams,
        response: { 200: UploadView, ...errors(404) },
      },
    },
    async (request) => uploadView(await uploadOr404(request.params.id)),
  );

  app.get(
    "/api/v1/sheets/:id/rows",
    {
      preValidation: allow("batches.read"),
      schema: {
        tags,
        summary: "An upload's rows, those with problems first (or only those), a page at a time",
        params: IdParams,
        querystring: UploadRowsQuery,
        response: { 200: UploadRowsPage, ...errors(404) },
      },
    },
    async (request) => {
      const upload = await uploadOr404(request.params.id);
      const { offset, limit, problems } = request.query;
      const page = await uploadRows(uploads, upload, { offset, limit, problemsOnly: problems === "only" });
      return { ...page, offset };
    },
  );

  app.patch(
    "/api/v1/sheets/:id/rows",
    {
      preValidation: allow("sheets.upload"),
      schema: {
        tags,
        summary: "Correct cells of an upload's rows; each corrected row is checked again at once",
        description:
          "The corrections are written into the sheet when it is submitted: the batch archives and pays the corrected sheet, validated again as a whole.",
        params: IdParams,
        body: RowEditsBody,
        response: {
          200: z.object({ upload: UploadView, rows: z.array(UploadRow) }),
          ...errors(404, 409),
        },
      },
    },
    async (request) => {
      const upload = await uploadOr404(request.params.id);
      notSubmitted(upload);
      if (upload.rows === 0) throw new ApiError(409, "NEEDS_MAPPING", "map the sheet's columns first");
      let result: Awaited<ReturnType<typeof editRows>>;
      try {
        result = await editRows(store, upload, request.body.rows, ctx.client);
      } catch (err) {
        if (err instanceof EditError) throw new ApiError(400, "INVALID_REQUEST", err.message);
        throw err;
      }
      await auditRequest(ctx.audit, request, "sheet.edit", upload.id, "ok", {
        rows: request.body.rows.map((r) => ({ row: r.row, columns: Object.keys(r.cells) })),
      });
      const wanted = [...new Set(request.body.rows.map((r) => String(r.row)))];
      return {
        upload: uploadView(result.record),
        rows: await uploadRowViews(uploads, result.record, wanted),
      };
    },
  );

  app.put(
    "/api/v1/sheets/:id/mapping",
    {
      preValidation: allow("sheets.upload"),
      schema: {
        tags,
        summary: "Map the sheet's own headers to our columns, and validate it again",
        description:
          "The mapping is remembered: the next sheet with the same headers is mapped when it comes.",
        params: IdParams,
        body: MappingBody,
        response: { 200: UploadView, ...errors(404, 409) },
      },
    },
    async (request) => {
      const upload = await uploadOr404(request.params.id);
      notSubmitted(upload);
      let record: UploadRecord;
      try {
        record = await applyMapping(uploads, upload, request.body.columns);
      } catch (err) {
        if (err instanceof MappingError) throw new ApiError(400, "INVALID_REQUEST", err.message);
        if (err instanceof SheetReadError)
          throw new ApiError(422, "SHEET_UNREADABLE", `${upload.fileName}: ${err.message}`);
        throw err;
      }
      await auditRequest(ctx.audit, request, "sheet.map", upload.id, "ok", { mapping: request.body.columns });
      return uploadView(record);
    },
  );

  app.get(
    "/api/v1/sheets/:id/report.:format",
    {
      preValidation: allow("batches.read"),
      schema: {
        tags,
        summary: "An upload's validation report as it came (CSV or XLSX; 404 when it had no problems)",
        params: IdParams.extend({ format: z.string().describe("`csv` or `xlsx`.") }),
        produces: ["text/csv", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
        response: { 200: z.any().describe("The file."), ...errors(404) },
      },
    },
    async (request, reply) => {
      const { id, format } = request.params;
      const upload = await uploadOr404(id);
      if (format !== "csv" && format !== "xlsx")
        throw new ApiError(404, "NOT_FOUND", "reports are .csv or .xlsx");
      if (!upload.reportPaths)
        throw new ApiError(404, "NOT_FOUND", `${upload.fileName} has no problems to report`);
      const name = `${path.basename(upload.fileName, path.extname(upload.fileName))}-report.${format}`;
      return reply
        .header("content-type", CONTENT_TYPES[format])
        .header("content-disposition", `attachment; filename="${name}"`)
        .send(createReadStream(upload.reportPaths[format]));
    },
  );

  app.get(
    "/api/v1/template.:format",
    {
      preValidation: allow("batches.read"),
      schema: {
        tags,
        summary: "The payout sheet template (CSV or XLSX, with the XLSX's drop-down lists)",
        params: z.object({ format: z.string().describe("`csv` or `xlsx`.") }),
        produces: ["text/csv", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
        response: { 200: z.any().describe("The file."), ...errors(404) },
      },
    },
    async (request, reply) => {
      const { format } = request.params;
      if (format !== "csv" && format !== "xlsx")
        throw new ApiError(404, "NOT_FOUND", "the template is .csv or .xlsx");
      return reply
        .header("content-type", CONTENT_TYPES[format])
        .header("content-disposition", `attachment; filename="payout-template.${format}"`)
        .send(createReadStream(packageFile(`templates/payout-template.${format}`)));
    },
  );
}

const CONTENT_TYPES = {
  csv: "text/csv; charset=utf-8",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
} as const;
