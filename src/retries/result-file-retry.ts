/**
 * A batch's result file dropped back into the inbox with corrected inputs (an operator's retry):
 * retries exactly the rows that failed (failed, rejected, error, canceled) or that the
 * operator changed and may be retried, and nothing else. A changed row that was paid or is in flight
 * is refused, never paid again (docs/design.md §3.1 and §3.4). Which rows: result-file-plan.ts.
 *
 * A file is a result file when its header ends in the ten result columns; its batch is the id in its
 * name (`<sheet>.<batchId>.result.<ext>`, as `payouts` names it, or any generated batch id in a
 * renamed copy). A changed row is checked again like a new sheet's row (checkRow against the live
 * accounts, the eligibility tool for faster delivery) before its new attempt; an invalid correction
 * is refused with its problems. The new attempt starts through startAttempt (a row in `error` is
 * resolved against the ledger first) and replaces the row's instruction and cells atomically
 * (BatchStore.startNewAttemptWithCorrection), with the next attempt number: a new Idempotency-Key and
 * the externalId `<reference>-r<attempt>`; the correction is appended to the batch's archive.
 */
import path from "node:path";
import {
  type BatchRecord,
  type BatchStore,
  enqueueQueuedRows,
  type RowEnqueuer,
  type RowRecord,
  type SourceValues,
} from "../batches/index.js";
import { undoExcelSafeText } from "../files/index.js";
import {
  checkAttachmentFile,
  checkRow,
  eligibilityProblem,
  fetchLiveContext,
  type IntakeApi,
  type LiveContext,
  type PayoutInstruction,
} from "../intake/index.js";
import { RESULT_COLUMNS } from "../results/index.js";
import {
  openSheet,
  type SheetCell,
  type SheetHeader,
  SheetReadError,
  type SheetRow,
} from "../sheets/index.js";
import {
  batchIdCandidates,
  type DroppedRow,
  isResultFileHeader,
  layoutMismatch,
  type PlannedBatchRow,
  planResultFileRetry,
  type RowDecision,
} from "./result-file-plan.js";
import { type LedgerApi, startAttempt } from "./start-attempt.js";

export interface ResultFileRetryOptions {
  /** The dropped file, where it lies now (processing/). */
  filePath: string;
  /** Its name as dropped: the batch id is read from it. Default: the basename of `filePath`. */
  fileName?: string;
  /** Live accounts and the eligibility tool, for re-validating corrected rows. */
  api: IntakeApi;
  store: BatchStore;
  enqueuer: RowEnqueuer;
  /** Live data already fetched (tests); else fetched through `api` when a row needs it. */
  live?: LiveContext;
  /**
   * The gate's say on the valid corrections (src/gate): which start now and which wait for approval.
   * Required: no correction starts an attempt without it.
   */
  admit: CorrectionAdmission;
}

/** A row's corrected inputs, validated. */
export interface Correction {
  instruction: PayoutInstruction;
  source: SourceValues;
}

/** One changed field of a corrected row (old and new as people read them). */
export interface ChangedField {
  field: string;
  old: string;
  new: string;
}

/**
 * The gate's verdict per corrected row (by row key): `refused`, the sentence saying why it may not be
 * paid as corrected (nothing started, nothing held); else `held` false, it may start now, or the
 * sentence saying why it waits for approval (it was held, not started). `changes`: what it changes.
 */
export interface CorrectionVerdict {
  held: false | string;
  refused?: string;
  changes: ChangedField[];
}

export type CorrectionAdmission = (
  batch: BatchRecord,
  corrections: readonly { row: RowRecord; correction: Correction }[],
) => Promise<Map<string, CorrectionVerdict>>;

/** What happened to one row, as the report shows it. */
export interface ResultFileRowOutcome {
  outcome: "retried" | "refused" | "left-alone" | "held";
  /** A corrected row: every sheet cell it changed. */
  changes?: ChangedField[];
  /** Row number in the dropped file (absent for a batch row the file left out). */
  fileRowNumber?: number;
  /** The batch row's number as the original sheet showed it (absent for a row not in the batch). */
  batchRowNumber?: number;
  reference?: string;
  detail: string;
  /** Retried rows: the new attempt and its externalId. */
  attempt?: number;
  externalId?: string;
}

export interface ResultFileRetryOutcome {
  /** The batch the file answers (undefined when no batch it names exists). */
  batchId: string | undefined;
  /** Why the whole file was refused without looking at its rows. */
  refusal?: string;
  rows: ResultFileRowOutcome[];
  /** Rows given a new attempt. */
  retried: number;
  /** Corrected rows held for approval (nothing of them starts until approved). */
  held: number;
  /** Retried money per currency (minor units), as the intake reports accepted sheets. */
  totals: Record<string, { rows: number; amount: number }>;
  /** Jobs handed to the queue. */
  enqueued: number;
  /** The report text (for the `.retry.txt` beside the file). */
  report: string;
}

/** Whether a file is a result file (its header ends in the result columns). Unreadable files are not. */
export async function isResultFile(filePath: string): Promise<boolean> {
  try {
    return isResultFileHeader((await openSheet(filePath)).header);
  } catch (err) {
    if (err instanceof SheetReadError) return false;
    throw err;
  }
}

function addToTotals(totals: ResultFileRetryOutcome["totals"], paid: PayoutInstruction): void {
  const t = totals[paid.currency] ?? { rows: 0, amount: 0 };
  t.rows++;
  t.amount += paid.amount;
  totals[paid.currency] = t;
}

/** The outcome line of a row retried from the file: its new attempt, and whether it was corrected. */
function retriedOutcome(
  decision: Extract<RowDecision, { kind: "retry" }>,
  started: { attempt: number; externalId: string },
  earlierState: string,
): ResultFileRowOutcome {
  const { attempt, externalId } = started;
  return {
    ...where(decision),
    outcome: "retried",
    attempt,
    externalId,
    detail:
      `retried as attempt ${attempt} (externalId ${externalId})` +
      (decision.changedColumns.length > 0
        ? ` with the corrected ${decision.changedColumns.map((c) => `"${c}"`).join(", ")}`
        : ` as it was (it was ${earlierState})`),
  };
}

/** The first batch id the file's name carries that this service knows (see batchIdCandidates). */
async function batchNamedBy(store: BatchStore, fileName: string): Promise<BatchRecord | undefined> {
  for (const candidate of batchIdCandidates(fileName)) {
    const batch = await store.getBatch(candidate);
    if (batch) return batch;
  }
  return undefined;
}

/** The dropped file's rows: their sheet cells read back, the key they carry, and the rows themselves. */
async function readDroppedRows(
  opened: Awaited<ReturnType<typeof openSheet>>,
  sourceCount: number,
): Promise<{ dropped: DroppedRow[]; fileRows: Map<number, SheetRow> }> {
  const header = opened.header;
  const keyColumn = header.columns[sourceCount + RESULT_COLUMNS.indexOf("idempotency_key")];
  const dropped: DroppedRow[] = [];
  const fileRows = new Map<number, SheetRow>();
  for await (const row of opened.rows) {
    const cells = header.columns.slice(0, sourceCount).map((c) => readBack(row.cells[c.key]));
    const key = keyColumn ? readBack(row.cells[keyColumn.key]).text.trim() : "";
    dropped.push({ fileRowNumber: row.rowNumber, cells, idempotencyKey: key || undefined });
    fileRows.set(row.rowNumber, row);
  }
  return { dropped, fileRows };
}

/** The batch's rows as the plan reads them, by key, and the references of its invalid rows. */
async function batchRowsToPlan(store: BatchStore, batchId: string) {
  const records = await store.listRows(batchId);
  const byKey = new Map(records.map((r) => [r.rowKey, r]));
  const invalidReferences = new Set<string>();
  for (const invalid of await store.invalidRows(batchId)) {
    const reference = invalid.source?.reference;
    if (typeof reference === "string" && reference.trim()) invalidReferences.add(reference.trim());
  }
  const planned: PlannedBatchRow[] = records.map((r) => ({
    rowKey: r.rowKey,
    rowNumber: r.rowNumber,
    source: r.source,
    state: r.state,
    attempt: r.attempt,
    requoteGeneration: r.requoteGeneration,
    errorCode: r.errorCode,
    reference: r.instruction.reference,
  }));
  return { byKey, planned, invalidReferences };
}

/**
 * Handles a dropped result file. Undefined when the file is not a result file (the caller submits it
 * as a sheet). Throws only what is not the file's fault (Redis, the API): the caller tries again later,
 * which is safe (a row retried already is `queued` on its new attempt, its corrections recorded, so
 * it is neither changed nor retryable the second time).
 *
 * One pass: read the dropped file, match it to its batch, plan (pure, in result-file-plan.ts), then
 * apply each decision. Kept as one function on purpose: the report written beside the file must list
 * every row's decision in one place, in the order they were applied.
 */
export async function retryFromResultFile(
  options: ResultFileRetryOptions,
): Promise<ResultFileRetryOutcome | undefined> {
  const fileName = options.fileName ?? path.basename(options.filePath);
  let opened: Awaited<ReturnType<typeof openSheet>>;
  try {
    opened = await openSheet(options.filePath);
  } catch (err) {
    if (err instanceof SheetReadError) return undefined;
    throw err;
  }
  if (!isResultFileHeader(opened.header)) return undefined;
  const { store } = options;
  const header = opened.header;

  const batch = await batchNamedBy(store, fileName);
  if (!batch) {
    return refuseWhole(
      fileName,
      undefined,
      "this is a result file (its last columns are the result columns) but its name carries no batch " +
        "this service knows; drop the result file as `payouts` named it (<sheet>.<batch id>.result.csv|xlsx). " +
        "To pay its rows as a new batch instead, delete the result columns and submit it as a new sheet",
    );
  }
  const mismatch = layoutMismatch(batch.sheet, header);
  if (mismatch) return refuseWhole(fileName, batch.id, mismatch);

  const sourceCount = batch.sheet.columns.length;
  const { dropped, fileRows } = await readDroppedRows(opened, sourceCount);
  const { byKey, planned, invalidReferences } = await batchRowsToPlan(store, batch.id);
  const decisions = planResultFileRetry({ batch, rows: planned, invalidReferences, dropped });

  let live = options.live;
  const rows: ResultFileRowOutcome[] = [];
  const totals: ResultFileRetryOutcome["totals"] = {};
  // First every row is checked; then the gate sees the corrections together (the batch's total with
  // all of them is what the approval policy judges); then the rows it lets through start.
  const toStart: {
    decision: Extract<RowDecision, { kind: "retry" }>;
    record: RowRecord;
    correction?: Correction;
  }[] = [];
  for (const decision of decisions) {
    if (decision.kind !== "retry") {
      rows.push(outcomeOf(decision));
      continue;
    }
    const record = byKey.get(decision.batchRow.rowKey)!;
    if (decision.changedColumns.length === 0) {
      toStart.push({ decision, record });
      continue;
    }
    live ??= await fetchLiveContext(options.api);
    const checked = await recheckRow({
      row: fileRows.get(decision.row.fileRowNumber)!,
      header,
      sourceCount,
      keys: batch.sheet.keys,
      live,
      api: options.api,
      sheetDir: path.dirname(path.resolve(options.filePath)),
      original: record.instruction,
    });
    if (!checked.ok) {
      rows.push({
        ...where(decision),
        outcome: "refused",
        detail: `the correction is invalid, nothing was retried: ${checked.problems.join("; ")}`,
      });
      continue;
    }
    toStart.push({
      decision,
      record,
      correction: { instruction: checked.instruction, source: checked.source },
    });
  }
  const admitted = await options.admit(
    batch,
    toStart.flatMap((t) => (t.correction ? [{ row: t.record, correction: t.correction }] : [])),
  );

  let retried = 0;
  for (const { decision, record, correction } of toStart) {
    const verdict = correction ? admitted.get(record.rowKey) : undefined;
    const changes = verdict?.changes.length ? { changes: verdict.changes } : {};
    if (verdict?.refused !== undefined) {
      rows.push({ ...where(decision), ...changes, outcome: "refused", detail: verdict.refused });
      continue;
    }
    if (verdict && verdict.held !== false) {
      rows.push({ ...where(decision), ...changes, outcome: "held", detail: verdict.held });
      continue;
    }
    const note =
      correction === undefined
        ? `retry from the result file ${fileName}`
        : `retry from the result file ${fileName} with corrected ${decision.changedColumns.join(", ")}`;
    const started = await startAttempt({
      store,
      ledger: ledgerOf(options.api),
      batch,
      row: record,
      note,
      correction,
    });
    if (started.kind === "adopted") {
      rows.push({
        ...where(decision),
        outcome: "left-alone",
        detail: `not retried: its earlier attempt did pay after all (payment ${started.paymentId}, now ${started.state})`,
      });
      continue;
    }
    if (started.kind !== "started") {
      rows.push({ ...where(decision), outcome: "left-alone", detail: started.reason });
      continue;
    }
    retried++;
    addToTotals(totals, correction?.instruction ?? record.instruction);
    rows.push({ ...retriedOutcome(decision, started, record.state), ...changes });
  }
  // Job ids are the rows' keys: rows queued already are not added twice. Queued rows are re-offered
  // even when nothing was retried now, so a drop interrupted after startNewAttempt and before this
  // point (then resumed from processing/) still hands its rows to the queue.
  // Never for a batch awaiting approval (or still being submitted: its resume feeds it), as retryRows.
  const enqueued =
    batch.enqueueComplete && (retried > 0 || planned.some((r) => r.state === "queued"))
      ? await enqueueQueuedRows(store, options.enqueuer, batch)
      : 0;
  rows.sort(byFileRow);
  return {
    batchId: batch.id,
    rows,
    retried,
    held: rows.filter((r) => r.outcome === "held").length,
    totals,
    enqueued,
    report: reportText(fileName, batch.id, rows),
  };
}

/** The ledger behind the intake's API when it has one (the service's client does). */
export function ledgerOf(api: IntakeApi): LedgerApi | undefined {
  return "payments" in api ? (api as IntakeApi & LedgerApi) : undefined;
}

/** A cell as the operator typed it: the `'` our writer put before formula-like text is taken off. */
function readBack(cell: SheetCell | undefined): SheetCell {
  if (!cell) return { text: "", kind: "empty" };
  if (cell.kind !== "string") return cell;
  const text = undoExcelSafeText(cell.text);
  return text === cell.text ? cell : { ...cell, text };
}

export interface RecheckInput {
  row: SheetRow;
  header: SheetHeader;
  sourceCount: number;
  keys: readonly string[];
  live: LiveContext;
  api: IntakeApi;
  sheetDir: string;
  original: PayoutInstruction;
}

type Recheck =
  | { ok: true; instruction: PayoutInstruction; source: SourceValues }
  | { ok: false; problems: string[] };

/** Validates a corrected row like a new sheet's row; the row keeps its batch number and key. */
export async function recheckRow(input: RecheckInput): Promise<Recheck> {
  const { row, header } = input;
  const cells: Record<string, SheetCell> = {};
  for (const column of header.columns) cells[column.key] = readBack(row.cells[column.key]);
  const readable: SheetRow = { ...row, cells };
  // The row checks of a new sheet, every one: a check added to intake's row checks (possible
  // duplicates among them) applies to corrections here too, for the result file and the console alike.
  const check = checkRow(readable, { live: input.live, header, sheetDir: input.sheetDir });
  const problems = check.problems.map((p) => `${p.column ? `${p.column}: ` : ""}${p.code}: ${p.message}`);
  if (!check.instruction || problems.length > 0) {
    return { ok: false, problems: problems.length > 0 ? problems : ["the row is not valid"] };
  }
  let instruction: PayoutInstruction = {
    ...check.instruction,
    rowNumber: input.original.rowNumber,
    rowKey: input.original.rowKey,
  };
  const attachmentColumn = header.columns.find((c) => c.canonical === "attachment");
  const attachmentCell = attachmentColumn ? cells[attachmentColumn.key]?.text.trim() : undefined;
  const originalAttachment = input.original.attachment;
  if (
    check.attachmentFile !== undefined &&
    originalAttachment?.kind === "file" &&
    attachmentCell !== undefined &&
    sameAttachment(originalAttachment.path, attachmentCell)
  ) {
    // Unchanged file name: the file next to the original sheet (the dropped copy has none beside it).
    instruction = { ...instruction, attachment: originalAttachment };
  } else if (check.attachmentFile !== undefined) {
    const verdict = await checkAttachmentFile(check.attachmentFile, input.sheetDir);
    if (!verdict.ok) return { ok: false, problems: [`${verdict.code}: ${verdict.message}`] };
    instruction = { ...instruction, attachment: { kind: "file", path: verdict.realPath } };
  }
  if (check.needsEligibilityCheck) {
    const refusal = await eligibilityProblem(input.api, instruction);
    if (refusal) return { ok: false, problems: [`${refusal.code}: ${refusal.message}`] };
  }
  const source: SourceValues = {};
  header.columns.slice(0, input.sourceCount).forEach((column, i) => {
    const cell = cells[column.key];
    const key = input.keys[i];
    if (!cell || cell.kind === "empty" || key === undefined) return;
    source[key] =
      cell.kind === "number" && cell.number !== undefined && !cell.lossy ? cell.number : cell.text;
  });
  return { ok: true, instruction, source };
}

function sameAttachment(originalPath: string, cellText: string): boolean {
  return path.basename(originalPath) === path.basename(cellText.replaceAll("\\", "/"));
}

function where(
  decision: Exclude<RowDecision, { kind: "not-in-file" }>,
): Omit<ResultFileRowOutcome, "outcome" | "detail"> {
  const reference = decision.batchRow?.reference;
  return {
    fileRowNumber: decision.row.fileRowNumber,
    ...(decision.batchRow ? { batchRowNumber: decision.batchRow.rowNumber } : {}),
    ...(reference ? { reference } : {}),
  };
}

function outcomeOf(decision: Exclude<RowDecision, { kind: "retry" }>): ResultFileRowOutcome {
  if (decision.kind === "not-in-file") {
    const reference = decision.batchRow.reference;
    return {
      outcome: "left-alone",
      batchRowNumber: decision.batchRow.rowNumber,
      ...(reference ? { reference } : {}),
      detail: decision.reason,
    };
  }
  return { ...where(decision), outcome: decision.kind, detail: decision.reason };
}

function byFileRow(a: ResultFileRowOutcome, b: ResultFileRowOutcome): number {
  const fa = a.fileRowNumber ?? Number.POSITIVE_INFINITY;
  const fb = b.fileRowNumber ?? Number.POSITIVE_INFINITY;
  return fa - fb || (a.batchRowNumber ?? 0) - (b.batchRowNumber ?? 0);
}

function refuseWhole(fileName: string, batchId: string | undefined, refusal: string): ResultFileRetryOutcome {
  return {
    batchId,
    refusal,
    rows: [],
    retried: 0,
    held: 0,
    totals: {},
    enqueued: 0,
    report: `${fileName}: nothing was retried: ${refusal}\n`,
  };
}

/** The `.retry.txt` text: a summary line, then one line per row, in the dropped file's order. */
export function reportText(fileName: string, batchId: string, rows: readonly ResultFileRowOutcome[]): string {
  const count = (o: ResultFileRowOutcome["outcome"]) => rows.filter((r) => r.outcome === o).length;
  const lines = [
    `${fileName}: corrected result file of batch ${batchId}`,
    `${count("retried")} row(s) retried, ${count("held") > 0 ? `${count("held")} held for approval, ` : ""}` +
      `${count("refused")} refused, ${count("left-alone")} left alone.`,
    "",
  ];
  for (const r of rows) {
    const at =
      r.fileRowNumber !== undefined
        ? `file row ${r.fileRowNumber}${r.batchRowNumber !== undefined ? ` (batch row ${r.batchRowNumber})` : ""}`
        : `batch row ${r.batchRowNumber}`;
    const label = {
      retried: "RETRIED",
      refused: "REFUSED",
      held: "HELD FOR APPROVAL",
      "left-alone": "left alone",
    }[r.outcome];
    lines.push(`${at}${r.reference ? `, reference ${r.reference}` : ""}: ${label}: ${r.detail}`);
  }
  return `${lines.join("\n")}\n`;
}
