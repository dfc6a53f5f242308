/**
 * Validation of a whole sheet: reads it as a stream, applies the row rules, and does the checks that
 * need I/O: references unique across rows, attachment files on disk, and the service's eligibility
 * tool for faster variants. Rows come out in sheet order; rows waiting for I/O are bounded by
 * `chunkSize`, so memory stays flat however long the sheet is.
 */
import path from "node:path";
import pLimit from "p-limit";
import { FirstUseIndex } from "../duplicates/first-use-index.js";
import {
  type DuplicateLookup,
  type DuplicateMatch,
  possibleDuplicateMessage,
  SheetDuplicates,
} from "../duplicates/index.js";
import type { FastPaymentEligibility, FastPaymentEligibilityRequest } from "../payouts-api/wire-types.js";
import { type OpenSheetOptions, openSheet, type SheetHeader, type SheetRow } from "../sheets/index.js";
import { type AttachmentVerdict, checkAttachmentFile } from "./attachment-file.js";
import { checkHeader, checkRow, type RowCheck } from "./check-row.js";
import {
  checkControlTotals,
  type DeclaredTotals,
  type FoundTotals,
  readTotalRow,
  type TotalRow,
  totalRowLabel,
} from "./control-totals.js";
import { fetchLiveContext, type LiveContext, type LiveDataSource } from "./live-context.js";
import type { PayoutInstruction } from "./payout-instruction.js";
import { type Problem, type ProblemCode, problem } from "./problems.js";

/** The part of the API client validation uses. */
export interface IntakeApi extends LiveDataSource {
  tools: { fastPaymentEligibility(body: FastPaymentEligibilityRequest): Promise<FastPaymentEligibility> };
}

export interface ValidatedRow {
  row: SheetRow;
  problems: Problem[];
  /** Present when the row is valid. */
  instruction?: PayoutInstruction;
  /**
   * POSSIBLE_DUPLICATE findings the operator confirmed (`duplicates.allow`): the row stays valid and
   * is paid; the submission records them in the audit trail.
   */
  possibleDuplicates?: Problem[];
}

export interface SheetValidation {
  sheetPath: string;
  header: SheetHeader;
  /** Problems of the sheet as a whole (a missing column): every row is invalid while there are any. */
  sheetProblems: Problem[];
  rows: AsyncIterable<ValidatedRow>;
  /**
   * Problems of the sheet as a whole that are known only once every row was read (a control total
   * that does not match): filled when `rows` is exhausted. Like `sheetProblems`, any refuses the sheet.
   */
  endProblems: Problem[];
}

export interface ValidateOptions extends OpenSheetOptions {
  api: IntakeApi;
  /** Live data fetched once per batch; fetched through `api` when not given. */
  live?: LiveContext;
  /**
   * At most this many rows wait behind one that needs I/O (an attachment file, the eligibility tool);
   * their I/O runs concurrently. Rows that need none are handed out as soon as nothing before them waits.
   * Default 256.
   */
  chunkSize?: number;
  /** Concurrent calls to the eligibility tool and the file system. Default 8. */
  concurrency?: number;
  /**
   * Possible duplicates (docs/design.md §3.13): the same payment twice in the sheet is always a
   * problem; `index` adds the rows of earlier batches within the window. With `allow` (the operator
   * confirmed them) they are not problems but kept on the row as `possibleDuplicates`.
   */
  duplicates?: { index?: DuplicateLookup | undefined; allow?: boolean | undefined };
  /** Totals the submitter vouches for (rows, sum per currency), checked like a total row. */
  declared?: DeclaredTotals;
}

/** Opens and validates a sheet. Throws SheetReadError when the file cannot be read at all. */
export async function validateSheet(sheetPath: string, options: ValidateOptions): Promise<SheetValidation> {
  const opened = await openSheet(sheetPath, options.sheet === undefined ? {} : { sheet: options.sheet });
  const live = options.live ?? (await fetchLiveContext(options.api));
  const sheetProblems = checkHeader(opened.header);
  const endProblems: Problem[] = [];
  const totalRows: TotalRow[] = [];
  const misplacedTotals = new Set<number>();
  const payoutRows = setTotalRowsAside(opened.rows, opened.header, totalRows, misplacedTotals);
  const rowsContext: RowsContext = {
    header: opened.header,
    live,
    api: options.api,
    sheetDir: path.dirname(path.resolve(sheetPath)),
    sheetInvalid: sheetProblems.length > 0,
    chunkSize: options.chunkSize ?? 256,
    concurrency: options.concurrency ?? 8,
    misplacedTotals,
  };
  const control = {
    totalRows,
    endProblems,
    amountColumn: columnTitle(opened.header, "amount"),
    ...(options.declared ? { declared: options.declared } : {}),
  };
  return {
    sheetPath,
    header: opened.header,
    sheetProblems,
    endProblems,
    // Possible duplicates are flagged after the control totals are summed: a sheet's own total counts
    // every payout it lists, the repeated one too.
    rows: flagPossibleDuplicates(checkedAgainstTotals(validateRows(payoutRows, rowsContext), control), {
      column: columnTitle(opened.header, "amount"),
      index: options.duplicates?.index,
      allow: options.duplicates?.allow === true,
      chunkSize: options.chunkSize ?? 256,
    }),
  };
}

/**
 * Passes the sheet's rows on, except its trailing total rows, which go to `totalRows`. A total row
 * followed by more rows is not a trailing total: it is passed on (as an ordinary, invalid row) and
 * its number goes to `misplaced`, so its problem says what it looks like.
 */
async function* setTotalRowsAside(
  rows: AsyncIterable<SheetRow>,
  header: SheetHeader,
  totalRows: TotalRow[],
  misplaced: Set<number>,
): AsyncGenerator<SheetRow> {
  let held: SheetRow[] = [];
  for await (const row of rows) {
    const label = totalRowLabel(row, header);
    if (label !== undefined) {
      held.push(row);
      continue;
    }
    for (const early of held) {
      misplaced.add(early.rowNumber);
      yield early;
    }
    held = [];
    yield row;
  }
  for (const row of held) totalRows.push(readTotalRow(row, header, totalRowLabel(row, header)!));
}

/** Passes the validated rows on, adding up the valid ones; at the end holds them against the control totals. */
async function* checkedAgainstTotals(
  rows: AsyncIterable<ValidatedRow>,
  control: { totalRows: TotalRow[]; endProblems: Problem[]; amountColumn: string; declared?: DeclaredTotals },
): AsyncGenerator<ValidatedRow> {
  const found: FoundTotals = new Map();
  let invalidRows = 0;
  for await (const validated of rows) {
    const instruction = validated.instruction;
    if (instruction) {
      const t = found.get(instruction.currency) ?? { rows: 0, minor: 0 };
      t.rows++;
      t.minor += instruction.amount;
      found.set(instruction.currency, t);
    } else {
      invalidRows++;
    }
    yield validated;
  }
  control.endProblems.push(
    ...checkControlTotals({
      found,
      totalRows: control.totalRows,
      invalidRows,
      amountColumn: control.amountColumn,
      ...(control.declared ? { declared: control.declared } : {}),
    }),
  );
}

interface RowsContext {
  header: SheetHeader;
  live: LiveContext;
  api: IntakeApi;
  sheetDir: string;
  sheetInvalid: boolean;
  chunkSize: number;
  concurrency: number;
  /** Rows that look like a total row but are followed by more rows. */
  misplacedTotals: Set<number>;
}

async function* validateRows(rows: AsyncIterable<SheetRow>, ctx: RowsContext): AsyncGenerator<ValidatedRow> {
  const firstRowOfReference = new FirstUseIndex();
  const limit = pLimit(ctx.concurrency);
  const attachmentChecks = new Map<string, Promise<AttachmentVerdict>>();
  const referenceKey = ctx.header.columns.find((c) => c.canonical === "reference")?.key;
  // Rows in sheet order behind the first row still waiting for I/O. Most rows need none: they are handed
  // out at once while nothing waits, else queued behind the waiting ones so sheet order holds.
  let queue: Array<ValidatedRow | Promise<ValidatedRow>> = [];

  const drain = async function* (): AsyncGenerator<ValidatedRow> {
    const waiting = queue;
    queue = [];
    for (const entry of waiting) yield await entry;
  };

  const checkContext = { live: ctx.live, header: ctx.header, sheetDir: ctx.sheetDir };
  for await (const row of rows) {
    const check = checkRow(row, checkContext);
    if (ctx.misplacedTotals.has(row.rowNumber)) {
      check.problems.unshift(
        problem(
          row.rowNumber,
          null,
          "CONTROL_TOTAL_NOT_LAST",
          `row ${row.rowNumber} looks like a total row, but payout rows follow it; a control total must be the last row(s) of the sheet: move it to the end or remove it`,
        ),
      );
      delete check.instruction;
    }
    const reference = check.instruction?.reference ?? referenceText(row, referenceKey);
    if (reference) {
      const first = firstRowOfReference.firstUseOrRecord(reference, row.rowNumber);
      if (first !== undefined) {
        check.problems.push(
          problem(
            row.rowNumber,
            columnTitle(ctx.header, "reference"),
            "REFERENCE_DUPLICATE",
            `reference "${reference}" is already used on row ${first}; every payout needs its own reference`,
          ),
        );
      }
    }
    if (check.attachmentFile !== undefined || check.needsEligibilityCheck) {
      const finished = limit(() => finishRowWithIo(row, check, ctx, attachmentChecks));
      // Awaited later, in sheet order; until then a failure must not count as an unhandled rejection.
      finished.catch(() => {});
      queue.push(finished);
    } else if (queue.length === 0) {
      yield finishRow(row, check.problems, check.instruction, ctx);
      continue;
    } else {
      queue.push(finishRow(row, check.problems, check.instruction, ctx));
    }
    if (queue.length >= ctx.chunkSize) yield* drain();
  }
  yield* drain();
}

function finishRow(
  row: SheetRow,
  problems: Problem[],
  instruction: PayoutInstruction | undefined,
  ctx: RowsContext,
): ValidatedRow {
  const valid = problems.length === 0 && !ctx.sheetInvalid && instruction !== undefined;
  return valid ? { row, problems, instruction } : { row, problems };
}

/** Asks the service whether a faster variant may be used; the problem to report when it may not. */
export async function eligibilityProblem(
  api: IntakeApi,
  instruction: PayoutInstruction,
): Promise<{ code: "DELIVERY_NOT_ELIGIBLE"; message: string } | undefined> {
  const answer = await api.tools.fastPaymentEligibility({
    amount: instruction.amount,
    deliveryPreference: instruction.deliveryPreference,
    originatingAccountId: instruction.originatingAccountId,
    receivingAccountId: instruction.receivingAccountId,
  });
  if (answer.eligible) return undefined;
  const reasons = answer.reasons.map((r) => `${r.code}: ${r.message}`).join("; ");
  return {
    code: "DELIVERY_NOT_ELIGIBLE",
    message: `this payment is not eligible for ${instruction.deliveryPreference}${reasons ? ` (${reasons})` : ""}; choose the standard speed or leave delivery blank`,
  };
}

/** The checks of one row that need I/O: its attachment file on disk, the service's eligibility tool. */
async function finishRowWithIo(
  row: SheetRow,
  check: RowCheck,
  ctx: RowsContext,
  attachmentChecks: Map<string, Promise<AttachmentVerdict>>,
): Promise<ValidatedRow> {
  const problems = check.problems;
  let instruction = check.instruction;
  if (check.attachmentFile) {
    const file = check.attachmentFile;
    let verdict = attachmentChecks.get(file);
    if (!verdict) {
      verdict = checkAttachmentFile(file, ctx.sheetDir);
      attachmentChecks.set(file, verdict);
    }
    const result = await verdict;
    if (!result.ok) {
      problems.push(
        problem(row.rowNumber, columnTitle(ctx.header, "attachment"), result.code, result.message),
      );
    } else if (instruction) {
      // The worker uploads (and checks again) the file by its real path.
      instruction = { ...instruction, attachment: { kind: "file", path: result.realPath } };
    }
  }
  if (instruction && check.needsEligibilityCheck && problems.length === 0) {
    const refusal = await eligibilityProblem(ctx.api, instruction);
    if (refusal)
      problems.push(
        problem(row.rowNumber, columnTitle(ctx.header, "delivery"), refusal.code, refusal.message),
      );
  }
  return finishRow(row, problems, instruction, ctx);
}

/**
 * The last pass over the valid rows, in sheet order: each row without a reference gets its content key,
 * and a row that pays what an earlier row of the sheet (or, through `index`, of a recent batch) pays is
 * a possible duplicate. The cross-batch look-ups go a chunk of rows at a time, one chunk ahead: a
 * chunk's look-up is under way while the next chunk is read and validated (look-ups still go out, and
 * are answered, in sheet order), so reading never waits for Redis.
 */
async function* flagPossibleDuplicates(
  rows: AsyncIterable<ValidatedRow>,
  ctx: { column: string; index: DuplicateLookup | undefined; allow: boolean; chunkSize: number },
): AsyncGenerator<ValidatedRow> {
  const sheet = new SheetDuplicates();
  type Waiting = { validated: ValidatedRow; paymentKey?: string; earlier?: DuplicateMatch | undefined };
  type Asked = { waiting: Waiting[]; earlierBatches: Promise<Map<string, DuplicateMatch[]> | undefined> };
  const ask = (waiting: Waiting[]): Asked => {
    const asked = waiting.flatMap(({ validated, paymentKey, earlier }) =>
      validated.instruction && paymentKey
        ? [{ row: validated.instruction, paymentKey, earlierInSheet: earlier !== undefined }]
        : [],
    );
    const earlierBatches =
      ctx.index && asked.length > 0 ? ctx.index.matches(asked) : Promise.resolve(undefined);
    // Awaited once the chunk before it is answered; a failure meanwhile is not unhandled.
    earlierBatches.catch(() => undefined);
    return { waiting, earlierBatches };
  };
  const answer = async function* ({ waiting, earlierBatches }: Asked): AsyncGenerator<ValidatedRow> {
    const found = await earlierBatches;
    for (const { validated, paymentKey, earlier } of waiting) {
      const instruction = validated.instruction;
      if (!instruction || !paymentKey) {
        yield validated;
        continue;
      }
      const matches = [...(earlier ? [earlier] : []), ...(found?.get(paymentKey) ?? [])];
      if (matches.length === 0) {
        yield validated;
        continue;
      }
      const duplicate = problem(
        validated.row.rowNumber,
        ctx.column,
        "POSSIBLE_DUPLICATE",
        possibleDuplicateMessage(instruction, matches),
      );
      yield ctx.allow
        ? { ...validated, possibleDuplicates: [duplicate] }
        : { row: validated.row, problems: [...validated.problems, duplicate] };
    }
  };
  let chunk: Waiting[] = [];
  // Look-ups sent and not answered yet, oldest first: one stays under way while the next chunk is read.
  const unanswered: Asked[] = [];
  const next = async function* (keep: number): AsyncGenerator<ValidatedRow> {
    if (chunk.length > 0) unanswered.push(ask(chunk));
    chunk = [];
    // Answered in sheet order, and dropped only once answered: a reader that stops meanwhile still
    // finds every look-up under way in `unanswered`.
    while (unanswered.length > keep) {
      yield* answer(unanswered[0]!);
      unanswered.shift();
    }
  };
  try {
    for await (const validated of rows) {
      const waiting: Waiting = { validated };
      if (validated.instruction) {
        const seen = sheet.check(validated.instruction);
        if (seen.contentKey)
          validated.instruction = { ...validated.instruction, contentKey: seen.contentKey };
        waiting.paymentKey = seen.paymentKey;
        waiting.earlier = seen.earlier;
      }
      chunk.push(waiting);
      // Without an index there is nothing to wait for: each row is handed on as soon as it is read.
      if (!ctx.index) yield* next(0);
      else if (chunk.length >= ctx.chunkSize) yield* next(1);
    }
    yield* next(0);
  } finally {
    // A sheet that fails or is abandoned part way takes its claim back afterwards: every look-up
    // still under way (each records rows) must have ended first.
    await Promise.all(unanswered.map((a) => a.earlierBatches.catch(() => undefined)));
  }
}

function referenceText(row: SheetRow, referenceKey: string | undefined): string | undefined {
  const text = referenceKey === undefined ? undefined : row.cells[referenceKey]?.text.trim();
  return text || undefined;
}

function columnTitle(header: SheetHeader, canonical: string): string {
  return header.columns.find((c) => c.canonical === canonical)?.original ?? canonical;
}

/** What a fully read validation came to: for reports and exit codes. */
export interface ValidationSummary {
  rows: number;
  validRows: number;
  invalidRows: number;
  /** Sheet problems first, then row problems in sheet order. */
  problems: Problem[];
  countsByCode: Map<ProblemCode, number>;
}

/** Reads every row (keeping problems, not rows) and sums up. */
export async function summarizeValidation(validation: SheetValidation): Promise<ValidationSummary> {
  const problems = [...validation.sheetProblems];
  let rows = 0;
  let validRows = 0;
  for await (const validated of validation.rows) {
    rows++;
    if (validated.instruction) validRows++;
    problems.push(...validated.problems);
  }
  problems.unshift(...validation.endProblems);
  return summaryOf(rows, validRows, problems);
}

/** The summary of `rows` read, `validRows` of them valid, with these problems (sheet ones first). */
export function summaryOf(rows: number, validRows: number, problems: Problem[]): ValidationSummary {
  const countsByCode = new Map<ProblemCode, number>();
  for (const p of problems) countsByCode.set(p.code, (countsByCode.get(p.code) ?? 0) + 1);
  return { rows, validRows, invalidRows: rows - validRows, problems, countsByCode };
}
