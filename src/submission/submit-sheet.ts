/**
 * From a sheet on disk to a batch in the pipeline: validate every row against the live accounts,
 * write the report, archive the sheet (the intent), and submit the valid rows. Used by
 * `payouts submit`, the demo and the watched folder, so all three behave alike.
 *
 * With `onInvalid: "reject"` (the default) nothing is submitted while any row is invalid; with
 * `"skip"` the invalid rows are recorded as `invalid` (they show in the result file) and the rest go.
 *
 * The rows stream: while the sheet is validated they go to a scratch file beside the archive in the
 * archive's line format (whether anything is submitted is known only after the last row), which
 * becomes the batch's archive as it is, and from there they go into Redis a chunk at a time, so a
 * 1,000,000-row sheet is never held in memory.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { copyFile, mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { pipeline as streamPipeline } from "node:stream/promises";
import { cliIdentity } from "../approvals/index.js";
import { type AuditActor, AuditTrail } from "../audit/index.js";
import {
  archivedBatchForFile,
  DuplicateFileError,
  newBatchId,
  RowStaging,
  type SheetLayout,
  type SourceValues,
} from "../batches/index.js";
import type { DuplicateLookup } from "../duplicates/index.js";
import {
  type DeclaredTotals,
  defaultReportPath,
  type IntakeApi,
  type Problem,
  type SheetValidation,
  summaryOf,
  type ValidationSummary,
  validateSheet,
  writeValidationReport,
} from "../intake/index.js";
import { openPipeline, type Pipeline, type PipelineSettings, submitToPipeline } from "../pipeline/index.js";
import type { SheetHeader, SheetRow } from "../sheets/index.js";

export interface SubmitSheetOptions {
  sheetPath: string;
  /** XLSX: the worksheet to read. */
  sheetName?: string;
  api: IntakeApi;
  /** Where the batch goes, and DATA_DIR (`pipeline.dataDir`) for its archive and reports. */
  pipeline: PipelineSettings;
  entityId: string;
  onInvalid?: "reject" | "skip";
  dryRun?: boolean;
  allowDuplicateFile?: boolean;
  /** Where the validation report goes when there are problems; default next to the sheet. */
  reportPath?: string;
  /** Control totals the submitter vouches for; a mismatch refuses the sheet. */
  declared?: DeclaredTotals;
  /** Who submits (see SubmitBatchOptions.submittedBy); default `cli:<os user>`. */
  submittedBy?: string;
  /**
   * The operator confirmed the sheet's possible duplicates (docs/design.md §3.13): they are paid, and
   * the confirmation is recorded in the audit trail. Without it they are invalid rows.
   */
  allowPossibleDuplicates?: boolean;
}

/** Money per currency, in minor units. */
export type CurrencyTotals = Record<string, { rows: number; amount: number }>;

export type SubmitSheetOutcome =
  | { kind: "invalid"; summary: ValidationSummary; reportPath: string }
  | { kind: "nothing-to-pay"; summary: ValidationSummary; reportPath: string | undefined }
  | { kind: "dry-run"; summary: ValidationSummary; totals: CurrencyTotals; reportPath: string | undefined }
  | {
      kind: "submitted";
      batchId: string;
      /** An earlier interrupted submission of the same file was finished instead of a new batch. */
      resumed: boolean;
      summary: ValidationSummary;
      totals: CurrencyTotals;
      enqueued: number;
      reportPath: string | undefined;
      /** The batch waits for approval (APPROVAL_THRESHOLDS): nothing is queued until it is approved. */
      awaitingApproval: boolean;
      /** Possible duplicates the operator confirmed (paid, and audited). */
      possibleDuplicates: number;
      /** Their row numbers (the first 1,000), for the audit entry. */
      possibleDuplicateRows: number[];
    };

export { DuplicateFileError };

export async function submitSheet(options: SubmitSheetOptions): Promise<SubmitSheetOutcome> {
  const sheetPath = path.resolve(options.sheetPath);
  const fileSha256 = await sha256Of(sheetPath);
  const windowDays = options.pipeline.duplicateWindowDays;
  const allow = options.allowPossibleDuplicates === true;
  // The cross-batch check and the audit of a confirmation need Redis before the batch is recorded.
  const pipeline =
    options.pipeline.open ?? (windowDays > 0 || allow ? openPipeline(options.pipeline) : undefined);
  const batchId = newBatchId();
  // Rows are recorded in the index as they are looked up, under the batch the sheet is about to
  // become, so a sheet taken at the same time sees them; taken back if no batch comes of it.
  const claim = windowDays > 0 ? pipeline?.duplicates?.claimFor(batchId, allow) : undefined;
  let claimed = false;
  try {
    const validation = await validateSheet(sheetPath, {
      api: options.api,
      ...(options.sheetName === undefined ? {} : { sheet: options.sheetName }),
      ...(options.declared ? { declared: options.declared } : {}),
      duplicates: {
        index:
          claim && pipeline
            ? await otherFilesOnly(claim, pipeline, options.pipeline.dataDir, fileSha256)
            : undefined,
        allow,
      },
    });
    const layout = layoutOf(validation.header);
    // Scratch files have a folder of their own: finding abandoned ones lists it on every submission,
    // and the archive beside it holds a file for every batch ever submitted.
    const staging = await RowStaging.create(
      path.join(options.pipeline.dataDir, "archive", "staging", `.staging-${batchId}.ndjson`),
    );
    try {
      const settings = pipeline ? { ...options.pipeline, open: pipeline } : options.pipeline;
      const outcome = await validateAndSubmit(
        { ...options, pipeline: settings },
        { sheetPath, fileSha256, validation, layout, batchId, staging },
      );
      if (outcome.kind === "submitted" && !outcome.resumed && pipeline) {
        claimed = outcome.batchId === batchId;
        await afterSubmission(pipeline, options, outcome);
      }
      return outcome;
    } finally {
      await staging.remove();
    }
  } finally {
    try {
      // Taken back only when no batch came of the sheet: one recorded by a submission that failed later
      // is finished by a worker (resumeIncompleteBatches) and paid, so its rows stay in sight.
      if (claim && !claimed && !(await pipeline?.store.getBatch(batchId))) await claim.release();
    } finally {
      if (pipeline && pipeline !== options.pipeline.open) await pipeline.close();
    }
  }
}

/**
 * The index without the batch this very file was accepted as: the same file again is resumed (an
 * interrupted submission) or refused as DUPLICATE_FILE by submission, never held as its own duplicate.
 */
async function otherFilesOnly(
  index: DuplicateLookup,
  pipeline: Pipeline,
  dataDir: string,
  fileSha256: string,
): Promise<DuplicateLookup> {
  const own = new Set(
    [await archivedBatchForFile(dataDir, fileSha256), await pipeline.store.batchIdForFile(fileSha256)].filter(
      (id): id is string => id !== undefined,
    ),
  );
  if (own.size === 0) return index;
  return {
    matches: async (rows) => {
      const found = await index.matches(rows);
      for (const [key, matches] of found) {
        const others = matches.filter((m) => m.batchId === undefined || !own.has(m.batchId));
        if (others.length > 0) found.set(key, others);
        else found.delete(key);
      }
      return found;
    },
  };
}

/** A confirmation of possible duplicates is audited (the batch's rows are in the index by its claim). */
async function afterSubmission(
  pipeline: Pipeline,
  options: SubmitSheetOptions,
  outcome: Extract<SubmitSheetOutcome, { kind: "submitted" }>,
): Promise<void> {
  if (outcome.possibleDuplicates === 0) return;
  const by = options.submittedBy ?? cliIdentity();
  await new AuditTrail(pipeline.redis, pipeline.prefix).record({
    actor: actorOf(by),
    action: "batch.duplicates-confirmed",
    target: outcome.batchId,
    from: by.startsWith("cli:") ? "cli" : by.startsWith("system:") ? "system" : "api",
    outcome: "ok",
    detail: {
      count: outcome.possibleDuplicates,
      rows: outcome.possibleDuplicateRows,
      sheet: path.basename(options.sheetPath),
    },
  });
}

/** The audit actor of a submitter as submissions name them (`cli:<user>`, `system:inbox`, a user name). */
function actorOf(submittedBy: string): AuditActor {
  const [kind, name] = submittedBy.split(/:(.*)/s);
  if (kind === "cli" && name) return { kind: "cli", name };
  if (kind === "system" && name) return { kind: "system", name };
  return { kind: "user", name: submittedBy };
}

async function validateAndSubmit(
  options: SubmitSheetOptions,
  read: {
    sheetPath: string;
    fileSha256: string;
    validation: SheetValidation;
    layout: Omit<SheetLayout, "archivedSheetPath">;
    batchId: string;
    staging: RowStaging;
  },
): Promise<SubmitSheetOutcome> {
  const { sheetPath, fileSha256, validation, layout, batchId, staging } = read;
  const problems: Problem[] = [...validation.sheetProblems];
  const totals: CurrencyTotals = {};
  let rows = 0;
  let validRows = 0;
  let possibleDuplicates = 0;
  const possibleDuplicateRows: number[] = [];
  for await (const validated of validation.rows) {
    rows++;
    if (validated.instruction && validated.possibleDuplicates) {
      if (++possibleDuplicates <= 1000) possibleDuplicateRows.push(validated.row.rowNumber);
    }
    const source = sourceValuesOf(validated.row, validation.header);
    if (validated.instruction) {
      validRows++;
      const { currency, amount } = validated.instruction;
      const t = totals[currency] ?? { rows: 0, amount: 0 };
      t.rows++;
      t.amount += amount;
      totals[currency] = t;
      await staging.addRow({ ...validated.instruction, source });
    } else {
      problems.push(...validated.problems);
      await staging.addInvalid({
        rowNumber: validated.row.rowNumber,
        source,
        problems: (validated.problems.length > 0 ? validated.problems : validation.sheetProblems).map(
          (p) => ({
            column: p.column ?? undefined,
            message: `${p.code}: ${p.message}`,
          }),
        ),
      });
    }
  }
  await staging.close();
  // A control total that does not match refuses the sheet whatever onInvalid says: it is not the sheet meant.
  problems.unshift(...validation.endProblems);
  const summary = summaryOf(rows, validRows, problems);

  let reportPath: string | undefined;
  if (problems.length > 0) {
    reportPath = path.resolve(options.reportPath ?? defaultReportPath(sheetPath));
    await writeValidationReport(reportPath, problems);
  }
  const onInvalid = options.onInvalid ?? "reject";
  const sheetRefused = validation.sheetProblems.length > 0 || validation.endProblems.length > 0;
  if (sheetRefused || (problems.length > 0 && onInvalid === "reject")) {
    return { kind: "invalid", summary, reportPath: reportPath! };
  }
  if (options.dryRun) return { kind: "dry-run", summary, totals, reportPath };
  if (validRows === 0) return { kind: "nothing-to-pay", summary, reportPath };

  // The sheet itself is archived first, under the batch id it will get; a resumed or refused
  // submission removes its copy again (the earlier batch has its own).
  const archivedSheetPath = path.join(
    options.pipeline.dataDir,
    "archive",
    `${batchId}${path.extname(sheetPath).toLowerCase()}`,
  );
  await mkdir(path.dirname(archivedSheetPath), { recursive: true });
  await copyFile(sheetPath, archivedSheetPath);
  let keepArchive = false;
  try {
    const result = await submitToPipeline(options.pipeline, {
      staged: staging,
      fileSha256,
      sourceName: path.basename(sheetPath),
      entityId: options.entityId,
      dataDir: options.pipeline.dataDir,
      allowDuplicateFile: options.allowDuplicateFile === true,
      batchId,
      sheet: { ...layout, archivedSheetPath },
      ...(options.submittedBy === undefined ? {} : { submittedBy: options.submittedBy }),
    });
    keepArchive = !result.resumed;
    return {
      kind: "submitted",
      batchId: result.batchId,
      resumed: result.resumed,
      summary,
      totals,
      enqueued: result.enqueued,
      reportPath,
      awaitingApproval: result.awaitingApproval === true,
      possibleDuplicates,
      possibleDuplicateRows,
    };
  } finally {
    if (!keepArchive) await rm(archivedSheetPath, { force: true });
  }
}

function layoutOf(header: SheetHeader): Omit<SheetLayout, "archivedSheetPath"> {
  return {
    columns: header.columns.map((c) => c.original),
    keys: header.columns.map((c) => c.key),
    format: header.format,
  };
}

/** The row's cells as the result file will show them: numbers stay numbers. */
/**
 * The row's cells as the batch keeps them for its result file: numbers stay numbers, except a number
 * whose digits cannot all be trusted (lossy) or that the sheet shows zero-padded (`000123`), kept as
 * the text the sheet shows so that a reference in the result file is the one that was paid.
 */
export function sourceValuesOf(row: SheetRow, header: SheetHeader): SourceValues {
  const values: SourceValues = {};
  for (const column of header.columns) {
    const cell = row.cells[column.key];
    if (!cell || cell.kind === "empty") continue;
    values[column.key] =
      cell.kind === "number" && cell.number !== undefined && !cell.lossy && !cell.padded
        ? cell.number
        : cell.text;
  }
  return values;
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash("sha256");
  await streamPipeline(createReadStream(file), hash);
  return hash.digest("hex");
}
