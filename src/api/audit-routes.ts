/**
 * The audit trail over HTTP (admins): `GET /api/v1/audit?batch&actor&action&limit&cursor`, newest
 * first, and `GET /api/v1/audit.csv` with the same filters, streamed, every cell made safe to open in
 * a spreadsheet. What is recorded, and by whom: docs/design.md §3.14.
 */
import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { AUDIT_CSV_HEADER, AUDIT_CURSOR_PATTERN, type AuditFilter, auditCsvLine } from "../audit/index.js";
import { allow } from "../auth/index.js";
import type { ApiContext } from "./context.js";
import { errors, Limit } from "./schemas.js";

const Filters = {
  batch: z.string().max(200).optional().describe("A batch id: entries about the batch or one of its rows."),
  actor: z
    .string()
    .max(200)
    .optional()
    .describe(
      "The actor's name exactly: a user or token, `cli:<os user>`, `system:inbox`, `system:schedule`.",
    ),
  action: z
    .string()
    .max(100)
    .optional()
    .describe("An action (`rows.correct`), or its first part (`rows` for every `rows.*`)."),
};

const AuditQuery = z.object({
  limit: Limit(50, 500),
  cursor: z
    .string()
    .regex(AUDIT_CURSOR_PATTERN, "cursor is not one this server gave")
    .optional()
    .describe("The `nextCursor` of the previous page."),
  ...Filters,
});

const AuditEntryView = z.object({
  id: z.string(),
  at: z.string().describe("ISO time."),
  actor: z.object({
    kind: z.string().describe("`user`, `token`, `cli`, `system` or `anonymous`."),
    name: z.string(),
    role: z.string().optional(),
  }),
  action: z
    .string()
    .describe("`batch.submit`, `rows.retry`, `rows.correct`, `rows.hold`, `batch.recover`, `batch.approve`…"),
  target: z.string().optional().describe("A batch id, `batch/row`, a user or token name."),
  from: z.string().describe("Client IP, or `cli`, `inbox`, `schedule`, `worker`."),
  outcome: z.enum(["ok", "denied", "failed"]),
  detail: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      "Facts of the action: counts, totals, and for a correction what changed (row, field, old, new).",
    ),
});

const AuditPage = z.object({
  data: z.array(AuditEntryView),
  nextCursor: z
    .string()
    .nullable()
    .describe("Where the next page starts; null at the end. A filtered page may be short and still go on."),
});

function filterOf(query: {
  batch?: string | undefined;
  actor?: string | undefined;
  action?: string | undefined;
}): AuditFilter {
  return {
    batch: query.batch || undefined,
    actor: query.actor || undefined,
    action: query.action || undefined,
  };
}

export function registerAuditRoutes(parent: FastifyInstance, ctx: ApiContext): void {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const tags = ["audit"];
  app.get(
    "/api/v1/audit",
    {
      preValidation: allow("audit.read"),
      schema: {
        tags,
        summary: "The audit trail, newest first, filtered by batch, actor and action (admins)",
        querystring: AuditQuery,
        response: { 200: AuditPage, ...errors() },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      return ctx.audit.list({ limit, cursor, filter: filterOf(request.query) });
    },
  );

  app.get(
    "/api/v1/audit.csv",
    {
      preValidation: allow("audit.read"),
      schema: {
        tags,
        summary: "The audit trail as CSV, newest first, with the same filters (admins)",
        querystring: z.object(Filters),
        produces: ["text/csv"],
        response: { 200: z.any().describe("The CSV file."), ...errors() },
      },
    },
    async (request, reply) => {
      const filter = filterOf(request.query);
      const entries = ctx.audit.entries(filter);
      async function* lines() {
        yield AUDIT_CSV_HEADER;
        for await (const e of entries) yield auditCsvLine(e);
      }
      const name = `audit${filter.batch ? `-${filter.batch.replace(/[^\w.-]/g, "_")}` : ""}.csv`;
      return reply
        .type("text/csv; charset=utf-8")
        .header("content-disposition", `attachment; filename="${name}"`)
        .send(Readable.from(lines()));
    },
  );
}
