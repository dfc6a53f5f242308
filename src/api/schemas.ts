/**
 * The shapes of /api/v1, once: each route states its params, query, body and answers with these zod
 * schemas; Fastify validates requests by them (fastify-type-provider-zod) and the OpenAPI description
 * (`GET /api/v1/openapi.json`) is generated from them, so the reference cannot drift from the code.
 */
import { z } from "zod";
import { APPROVAL_STATUSES, MAX_REASON_LENGTH } from "../approvals/index.js";
import { PERMISSIONS, ROLES } from "../auth/index.js";
import { ROW_STATES } from "../batches/index.js";

/** Every error answer: `{ error: { code, message, ...details } }`. */
export const ErrorBody = z
  .object({
    error: z
      .looseObject({
        code: z.string().describe("Stable machine-readable code (`NOT_FOUND`, `INVALID_REQUEST`, …)."),
        message: z.string().describe("What went wrong and what to do, for a person."),
      })
      .describe("Some codes carry more fields beside code and message (e.g. `batchId` of DUPLICATE_FILE)."),
  })
  .meta({ id: "Error" });

/** The error answers a route may give, by status (400, 401 and 403 are always possible). */
export function errors(...statuses: number[]): Record<number, typeof ErrorBody> {
  return Object.fromEntries([400, 401, 403, ...statuses].map((s) => [s, ErrorBody]));
}

export const Limit = (fallback: number, max: number) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(max)
    .default(fallback)
    .describe(`Page size, 1 to ${max} (default ${fallback}).`);

export const Cursor = z
  .string()
  .max(200)
  .optional()
  .describe("The `nextCursor` of the previous page (opaque); leave out for the first page.");

export const BatchIdParams = z.object({ id: z.string().max(200).describe("The batch id.") });
export const RowParams = BatchIdParams.extend({
  row: z.string().max(20).describe("The row's number in the sheet (as the spreadsheet shows it)."),
});

const Money = z.string().describe("An amount in major units of its currency, as text (`1250.00`, `5000`).");
const Iso = z.string().describe("An ISO 8601 time (UTC).");

export const ErrorHelp = z
  .object({
    code: z.string(),
    sentence: z.string().describe("What happened, in one plain sentence."),
    nextStep: z.string().describe("What to do about it."),
  })
  .meta({ id: "ErrorHelp" });

export const RowStateOrInvalid = z.enum([...ROW_STATES, "invalid"]);

export const RowView = z
  .object({
    row: z.number().int().describe("The row's number in the sheet."),
    reference: z.string().nullable(),
    payee: z
      .object({
        account: z
          .string()
          .describe("The payee account as the sheet named it (`acct_…` or its external id)."),
        name: z.string().nullable().describe("The payee's name at the service, when known."),
      })
      .nullable(),
    amount: Money.nullable(),
    currency: z.string().nullable(),
    state: RowStateOrInvalid,
    paymentId: z.string().nullable(),
    paymentStatus: z.string().nullable(),
    errorCode: z.string().nullable(),
    errorMessage: z.string().nullable(),
    help: ErrorHelp.nullable().describe("For a row with an error: what happened and what to do."),
    waitingFor: z.string().nullable().describe("For a row not final yet: what it waits for."),
    problems: z
      .array(z.object({ column: z.string().nullable(), message: z.string() }))
      .describe("An invalid row's problems (empty for valid rows)."),
    attempt: z.number().int().nullable(),
    updatedAt: Iso.nullable(),
  })
  .meta({ id: "Row" });

export const RowDetail = RowView.extend({
  history: z.array(
    z.object({
      at: Iso,
      from: z.string().nullable(),
      to: z.string(),
      attempt: z.number().int(),
      note: z.string().nullable(),
    }),
  ),
}).meta({ id: "RowDetail" });

export const RowsQuery = z.object({
  state: z
    .string()
    .max(200)
    .optional()
    .describe(
      "Row states to list, comma-separated (`failed,rejected`), or `invalid` for the rows that failed validation.",
    ),
  q: z
    .string()
    .max(200)
    .optional()
    .describe(
      "Search: part of a reference, payment id, error code, payee (account or name) or cell; or an amount (`150.00`).",
    ),
  limit: Limit(50, 500),
  offset: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe("Start at this position in sheet order (0-based): a page jump. Ignored with a cursor."),
  cursor: Cursor,
});

export const RowsPage = z
  .object({
    data: z.array(RowView),
    nextCursor: z
      .string()
      .nullable()
      .describe("Pass it back as `cursor` for the next page; null at the end."),
    total: z
      .number()
      .int()
      .nullable()
      .describe("Rows that match, when known without reading them all (no search)."),
    rows: z.number().int().describe("Rows in the listing (the batch's valid rows, or its invalid rows)."),
    offset: z.number().int().nullable().describe("Position in sheet order where this page starts."),
    reached: z
      .number()
      .int()
      .nullable()
      .describe("Position the search reached: with a filter a page may be short while the search goes on."),
  })
  .meta({ id: "RowsPage" });

const CurrencyTotal = z.object({
  currency: z.string(),
  amount: Money,
  byState: z.record(z.string(), Money).describe("The amount per row state."),
});

export const BatchState = z.enum([
  "submitting",
  "awaiting-approval",
  "rejected",
  "expired",
  "running",
  "finished",
]);

/** Who paused or canceled a batch, when and why (`null`: not paused / not canceled). */
export const BatchStopView = z
  .object({
    paused: z
      .object({
        by: z.string(),
        at: Iso,
        reason: z.string(),
        byBreaker: z.boolean().describe("Paused by the circuit breaker (rows kept being refused)."),
      })
      .nullable(),
    canceled: z.object({ by: z.string(), at: Iso }).nullable(),
  })
  .meta({ id: "BatchStop" });

export const BatchView = z
  .object({
    id: z.string(),
    sourceName: z.string(),
    state: BatchState,
    createdAt: Iso,
    createdBy: z.string().nullable(),
    uploadId: z.string().nullable(),
    finishedAt: Iso.nullable(),
    rows: z.number().int().describe("Valid rows (each one payment)."),
    invalidRows: z.number().int(),
    done: z.number().int().describe("Rows in a terminal state."),
    counts: z.record(z.string(), z.number().int()).describe("Rows per state."),
    totals: z.array(CurrencyTotal),
    approval: z
      .object({
        status: z.enum(APPROVAL_STATUSES),
        required: z.number().int(),
        approvals: z.array(z.object({ by: z.string(), at: Iso })),
      })
      .nullable(),
    ledger: z
      .object({
        at: Iso,
        rows: z.number().int().describe("Valid rows held against the ledger."),
        payments: z.number().int().describe("Payments the service holds for the batch."),
        matched: z.number().int().describe("Rows whose payment (or absence of one) agrees with the ledger."),
        differences: z.number().int(),
        byKind: z.record(z.string(), z.number().int()).describe("Differences by kind."),
        behind: z
          .number()
          .int()
          .optional()
          .describe("Rows only behind their payment when checked, handed to the worker to follow."),
        summary: z.string().describe("One line: `ledger: 20,000 rows match, 0 differences`."),
      })
      .nullable()
      .describe("The batch's last check against the service's ledger (`payouts audit`), when it had one."),
    pause: BatchStopView.shape.paused.describe(
      "Paused (by an operator, or by the circuit breaker when its rows kept being refused): who, when, why. Null while it runs.",
    ),
    canceled: BatchStopView.shape.canceled.describe("Canceled: who, when. Null otherwise."),
  })
  .meta({ id: "Batch" });

export const BatchList = z.object({ data: z.array(BatchView), nextCursor: z.string().nullable() });

export const ApprovalView = z
  .object({
    status: z.enum(APPROVAL_STATUSES),
    required: z.number().int(),
    submittedBy: z.string(),
    requestedAt: Iso,
    expiresAt: Iso,
    approvals: z.array(z.object({ by: z.string(), at: Iso })),
    reasons: z
      .array(
        z.object({
          currency: z.string(),
          total: Money.describe("The batch's total in that currency."),
          threshold: Money.describe("The threshold it reached."),
          rule: z.string().describe("The rule that matched: the currency itself or `*`."),
        }),
      )
      .describe("Why the batch is held."),
    largest: z
      .array(
        z.object({
          row: z.number().int(),
          reference: z.string().nullable(),
          payee: z.string(),
          amount: Money,
          currency: z.string(),
        }),
      )
      .describe("The batch's largest rows per currency (up to 5 each), for the approver."),
    decidedAt: Iso.nullable(),
    decidedBy: z.string().nullable(),
    reason: z.string().nullable(),
    heldFor: z
      .enum(["batch", "correction"])
      .describe(
        "`batch`: the batch as submitted waits; `correction`: corrected rows of the batch wait (a correction " +
          "round), the rest of the batch goes on.",
      ),
    round: z
      .number()
      .int()
      .describe("1 for the first hold; one more for each correction round after a decision."),
    corrections: z
      .array(
        z.object({
          row: z.number().int(),
          by: z.string(),
          via: z.string().describe("`console`, or `result file <name>`."),
          changes: z.array(z.object({ field: z.string(), old: z.string(), new: z.string() })),
        }),
      )
      .describe("A correction round awaiting approval: each held row and what it changes in what is paid."),
  })
  .meta({ id: "Approval" });

export const Problem = z.object({
  row: z.number().int().nullable(),
  column: z.string().nullable(),
  code: z.string(),
  message: z.string(),
});

export const Session = z.object({
  name: z.string(),
  kind: z.enum(["user", "token"]).optional(),
  role: z.enum(ROLES),
  permissions: z.array(z.enum(PERMISSIONS)),
  csrfToken: z.string(),
});

export const SubmitBody = z.object({
  sheetId: z.string().max(100).describe("The id of an uploaded sheet (`upl_…`)."),
  onInvalid: z
    .enum(["reject", "skip"])
    .default("reject")
    .describe("`reject`: nothing is paid if a row is invalid; `skip`: pay the valid rows."),
  allowPossibleDuplicates: z
    .boolean()
    .default(false)
    .describe(
      "Pay rows flagged `POSSIBLE_DUPLICATE` (the same payee, amount and paying account as another row of the sheet or of a recent batch). Recorded in the audit trail as `batch.duplicates-confirmed`.",
    ),
  expectRows: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      "Control total: refuse the sheet unless it has exactly this many valid rows (as `--expect-rows`).",
    ),
  expectTotals: z
    .array(z.string().max(40))
    .max(50)
    .optional()
    .describe(
      "Control totals `CUR:amount` (e.g. `USD:125000.00`), one per currency: refuse the sheet unless its valid rows add up to them. Default: those given with the upload.",
    ),
});

/** Control totals declared with an upload. */
export const DeclaredTotalsView = z
  .object({
    rows: z.number().int().nullable(),
    totals: z.array(z.object({ currency: z.string(), amount: Money })),
  })
  .nullable()
  .describe("Control totals declared with the upload (`expectRows`, `expectTotals`), if any.");

export const RetryBody = z
  .object({
    rows: z
      .array(z.number().int().positive())
      .max(10_000)
      .optional()
      .describe("Row numbers to retry (default: every retryable row)."),
  })
  .optional();

export const PauseBody = z
  .object({
    reason: z.string().max(MAX_REASON_LENGTH).optional().describe("Why, for the banner and the audit trail."),
  })
  .optional();

export const CancelAnswer = z.object({
  unsent: z
    .number()
    .int()
    .describe("Rows never sent, now `canceled-unsent` (the result file says `canceled`)."),
  canceledAtService: z.number().int().describe("Payments still scheduled, now canceled at the service."),
  leftAlone: z.number().int().describe("Rows already on their way, paid or final: they keep their course."),
  notCanceled: z
    .array(z.object({ rowKey: z.string(), code: z.string() }))
    .describe("Payments the service would not cancel (already on their way)."),
  stop: BatchStopView,
});

export const RejectBody = z.object({
  reason: z
    .string()
    .trim()
    .min(1)
    .max(MAX_REASON_LENGTH)
    .describe("Why, for the submitter and the audit trail."),
});

export const UploadView = z
  .object({
    id: z.string().describe("The upload's id (`upl_…`), for `POST /api/v1/batches`."),
    fileName: z.string(),
    format: z.enum(["csv", "xlsx"]),
    sheet: z.string().optional().describe("The XLSX worksheet asked for."),
    rows: z.number().int(),
    validRows: z.number().int(),
    invalidRows: z.number().int(),
    totals: z.array(z.object({ currency: z.string(), rows: z.number().int(), amount: Money })),
    problemCount: z.number().int().describe("Problems in all (the rows' and the sheet's)."),
    sheetProblems: z
      .array(Problem)
      .describe(
        "Problems of the whole sheet (a missing column: then every row is invalid; a control total that does not match: then the sheet is refused on submit).",
      ),
    declared: DeclaredTotalsView,
    columns: z.array(z.string()).describe("The sheet's headers as written."),
    needsMapping: z.boolean().describe("The sheet's headers are not ours: map them (`PUT …/mapping`)."),
    ourColumns: z.array(z.string()).describe("Our columns a header can be mapped to."),
    mapping: z
      .record(z.string(), z.string())
      .nullable()
      .describe("Our column → the sheet's header, when mapped."),
    attachments: z.array(z.string()).describe("Files that came with the sheet, relative to its folder."),
    editedRows: z.number().int().describe("Rows corrected in the console (submitted as corrected)."),
    uploadedBy: z.string(),
    uploadedAt: Iso,
    batchId: z.string().optional().describe("The batch it was submitted as, once submitted."),
    reportUrl: z.string().nullable().describe("The validation report as the file came (CSV; `.xlsx` too)."),
  })
  .meta({ id: "Upload" });

export const UploadRow = z
  .object({
    row: z.number().int().describe("The row's number in the sheet."),
    cells: z.array(z.string()).describe("The cells as shown, in the order of `columns`."),
    problems: z.array(z.object({ column: z.string().nullable(), code: z.string(), message: z.string() })),
    edited: z.array(z.string()).describe("Columns corrected in the console."),
    valid: z.boolean(),
  })
  .meta({ id: "UploadRow" });

export const UploadRowsQuery = z.object({
  problems: z
    .enum(["first", "only"])
    .default("first")
    .describe("`first`: rows that had problems, then the others; `only`: just those."),
  offset: z.coerce.number().int().min(0).default(0),
  limit: Limit(50, 500),
});

export const UploadRowsPage = z.object({
  data: z.array(UploadRow),
  total: z.number().int().describe("Rows in the listing."),
  problemRows: z.number().int().describe("Rows that had problems when validated (they come first)."),
  offset: z.number().int(),
});

export const RowEditsBody = z.object({
  rows: z
    .array(
      z.object({
        row: z.number().int().positive(),
        cells: z
          .record(z.string(), z.string().max(2000))
          .describe("New cell texts by the sheet's column header."),
      }),
    )
    .min(1)
    .max(500),
});

export const MappingBody = z.object({
  columns: z
    .record(z.string(), z.string())
    .describe(
      'Our column → the sheet\'s header (`{ "amount": "Betrag" }`); remembered for sheets with the same headers.',
    ),
});

/** A multipart request body, for the description only (multipart bodies are read by the route). */
export const MULTIPART_SHEET_BODY = {
  type: "object",
  required: ["file"],
  properties: {
    file: {
      type: "string",
      format: "binary",
      description:
        "The sheet (.csv or .xlsx), or a .zip of the sheet and the files its attachment column names.",
    },
    attachments: {
      type: "array",
      items: { type: "string", format: "binary" },
      description: "Files the sheet's attachment column names (placed where it names them).",
    },
    sheet: { type: "string", description: "The XLSX worksheet to read (default: the first)." },
    expectRows: {
      type: "string",
      description: "Control total: the number of valid rows the sheet must have (as `--expect-rows`).",
    },
    expectTotals: {
      type: "string",
      description:
        "Control totals `CUR:amount`, one per currency (repeat the field, or separate with `;`): the sums the valid rows must add up to.",
    },
  },
} as const;
