/**
 * The one gate (docs/design.md §3.14): every path that creates or changes what is paid calls
 * {@link passGate} — a sheet submitted (CLI, console/API upload, the watched folder, a nightly run), a
 * retry (CLI, API, console), a corrected result file or a row corrected in the console, and a batch
 * recovered from its archive. Each kind is validated by intake's checks as before; the gate applies
 * the approval policy (to a new batch through submission's gate, to corrections by the rule in
 * instruction-rule.ts) and writes one audit entry naming who did it and what changed.
 *
 * Possible duplicates: a sheet's rows are flagged by intake's validation; corrected rows, which are
 * re-checked one at a time, are held against the cross-batch index and each other here
 * (correction-duplicates.ts), and refused unless a person confirmed them.
 */
import { type AuditActor, AuditTrail } from "../audit/index.js";
import {
  type BatchRecord,
  type RecoverBatchOptions,
  type RecoverBatchResult,
  recoverBatch,
} from "../batches/index.js";
import type { Pipeline } from "../pipeline/index.js";
import {
  type CorrectionAdmission,
  type CorrectRowOptions,
  type CorrectRowOutcome,
  correctRow,
  isResultFile,
  type ResultFileRetryOptions,
  type ResultFileRetryOutcome,
  type RetryRowsOptions,
  type RetryRowsResult,
  retryFromResultFile,
  retryRows,
} from "../retries/index.js";
import { type SubmitSheetOptions, type SubmitSheetOutcome, submitSheet } from "../submission/index.js";
import { admitCorrections } from "./admit-corrections.js";
import { auditedChanges } from "./instruction-rule.js";

/** Who passes the gate and from where: the audit trail's actor and `from`. */
export interface GateCaller {
  actor: AuditActor;
  /** A client IP, `cli`, `inbox` or `schedule`. */
  from: string;
}

export interface GateContext extends GateCaller {
  /** An open pipeline (store, queue, approvals, the policy); the gate does not close it. */
  pipeline: Pipeline;
  /** The audit trail to write to; default the pipeline's own (same Redis, same prefix). */
  audit?: AuditTrail | undefined;
}

export type GateRequest =
  | { kind: "submit"; sheet: Omit<SubmitSheetOptions, "submittedBy"> }
  | { kind: "retry"; retry: Omit<RetryRowsOptions, "store" | "enqueuer"> }
  | { kind: "result-file"; file: Omit<ResultFileRetryOptions, "store" | "enqueuer" | "admit"> }
  | {
      kind: "correct-row";
      correct: Omit<CorrectRowOptions, "store" | "enqueuer" | "admit" | "by">;
      /** A person confirmed the row is meant to be paid should it be a possible duplicate. */
      allowPossibleDuplicates?: boolean;
    }
  | { kind: "recover"; recover: Omit<RecoverBatchOptions, "store" | "enqueuer" | "gate"> };

export interface GateAnswers {
  submit: SubmitSheetOutcome;
  retry: RetryRowsResult;
  /** Undefined: the file is not a result file (submit it as a sheet). */
  "result-file": ResultFileRetryOutcome | undefined;
  "correct-row": CorrectRowOutcome;
  recover: RecoverBatchResult;
}

/** The one way in for anything that creates or changes what is paid. */
export async function passGate<K extends GateRequest["kind"]>(
  ctx: GateContext,
  request: Extract<GateRequest, { kind: K }>,
): Promise<GateAnswers[K]> {
  const r = request as GateRequest;
  switch (r.kind) {
    case "submit":
      return (await submitThroughGate(ctx, r.sheet)) as GateAnswers[K];
    case "retry":
      return (await retryThroughGate(ctx, r.retry)) as GateAnswers[K];
    case "result-file":
      return (await resultFileThroughGate(ctx, r.file)) as GateAnswers[K];
    case "correct-row":
      return (await correctRowThroughGate(
        ctx,
        r.correct,
        r.allowPossibleDuplicates === true,
      )) as GateAnswers[K];
    case "recover":
      return (await recoverThroughGate(ctx, r.recover)) as GateAnswers[K];
  }
}

function trailOf(ctx: GateContext): AuditTrail {
  return ctx.audit ?? new AuditTrail(ctx.pipeline.redis, ctx.pipeline.prefix);
}

async function record(
  ctx: GateContext,
  action: string,
  target: string | undefined,
  outcome: "ok" | "denied" | "failed",
  detail: Record<string, unknown>,
): Promise<void> {
  await trailOf(ctx).record({ actor: ctx.actor, action, target, from: ctx.from, outcome, detail });
}

async function submitThroughGate(
  ctx: GateContext,
  sheet: Omit<SubmitSheetOptions, "submittedBy">,
): Promise<SubmitSheetOutcome> {
  const source = sheet.sheetPath.split(/[\\/]/).pop();
  let outcome: SubmitSheetOutcome;
  try {
    outcome = await submitSheet({
      ...sheet,
      pipeline: { ...sheet.pipeline, open: ctx.pipeline },
      submittedBy: ctx.actor.name,
    });
  } catch (err) {
    // Refused as a whole (a file submitted before, an unreadable sheet): worth seeing in the trail too.
    await record(ctx, "batch.submit", source, "denied", { error: (err as Error).message }).catch(
      () => undefined,
    );
    throw err;
  }
  if (outcome.kind === "dry-run") return outcome;
  if (outcome.kind !== "submitted") {
    await record(ctx, "batch.submit", source, "denied", {
      outcome: outcome.kind,
      rows: outcome.summary.rows,
      invalidRows: outcome.summary.rows - outcome.summary.validRows,
    });
    return outcome;
  }
  await record(ctx, "batch.submit", outcome.batchId, "ok", {
    file: source,
    rows: outcome.summary.validRows,
    totals: totalsText(outcome.totals),
    ...(outcome.resumed ? { resumed: true } : {}),
    ...(outcome.awaitingApproval ? { awaitingApproval: true } : {}),
  });
  return outcome;
}

function totalsText(totals: Record<string, { rows: number; amount: number }>): Record<string, number> {
  return Object.fromEntries(Object.entries(totals).map(([currency, t]) => [currency, t.amount]));
}

async function retryThroughGate(
  ctx: GateContext,
  retry: Omit<RetryRowsOptions, "store" | "enqueuer">,
): Promise<RetryRowsResult> {
  const result = await retryRows({ ...retry, store: ctx.pipeline.store, enqueuer: ctx.pipeline.enqueuer });
  if (result.kind === "unknown-batch") {
    await record(ctx, "rows.retry", retry.batchId, "denied", { outcome: "unknown-batch" });
    return result;
  }
  await record(ctx, "rows.retry", retry.batchId, result.retried.length > 0 ? "ok" : "denied", {
    retried: result.retried.map((r) => r.rowNumber),
    adopted: result.adopted.map((r) => r.rowNumber),
    leftAlone: result.leftAlone.length,
    enqueued: result.enqueued,
  });
  return result;
}

async function resultFileThroughGate(
  ctx: GateContext,
  file: Omit<ResultFileRetryOptions, "store" | "enqueuer" | "admit">,
): Promise<ResultFileRetryOutcome | undefined> {
  if (!(await isResultFile(file.filePath))) return undefined;
  const via = `result file ${file.fileName ?? file.filePath.split(/[\\/]/).pop()}`;
  const outcome = await retryFromResultFile({
    ...file,
    store: ctx.pipeline.store,
    enqueuer: ctx.pipeline.enqueuer,
    // The watched folder has nobody to confirm a possible duplicate: such a row is refused.
    admit: correctionsAdmission(ctx, via, false),
  });
  if (!outcome) return outcome;
  const { changes, more } = auditedChanges(
    outcome.rows.flatMap((r) =>
      r.changes && r.batchRowNumber !== undefined
        ? [{ rowNumber: r.batchRowNumber, changes: r.changes }]
        : [],
    ),
  );
  await record(ctx, "rows.correct", outcome.batchId, outcome.refusal ? "denied" : "ok", {
    via,
    retried: outcome.retried,
    held: outcome.held,
    refused: outcome.rows.filter((r) => r.outcome === "refused").length,
    ...(outcome.refusal ? { refusal: outcome.refusal } : {}),
    ...(changes.length > 0 ? { changes } : {}),
    ...(more > 0 ? { moreChanges: more } : {}),
  });
  return outcome;
}

async function correctRowThroughGate(
  ctx: GateContext,
  correct: Omit<CorrectRowOptions, "store" | "enqueuer" | "admit" | "by">,
  allowPossibleDuplicates: boolean,
): Promise<CorrectRowOutcome> {
  const via = "console";
  const outcome = await correctRow({
    ...correct,
    store: ctx.pipeline.store,
    enqueuer: ctx.pipeline.enqueuer,
    admit: correctionsAdmission(ctx, via, allowPossibleDuplicates),
    by: ctx.actor.name,
  });
  const { changes, more } = auditedChanges(
    outcome.changes ? [{ rowNumber: correct.row.rowNumber, changes: outcome.changes }] : [],
  );
  await record(
    ctx,
    "rows.correct",
    `${correct.batch.id}/${correct.row.rowNumber}`,
    outcome.outcome === "refused" ? "denied" : "ok",
    {
      via,
      result: outcome.outcome,
      retried: outcome.outcome === "retried" ? 1 : 0,
      held: outcome.outcome === "held" ? 1 : 0,
      ...(outcome.outcome === "refused" ? { refusal: outcome.detail } : {}),
      ...(changes.length > 0 ? { changes } : {}),
      ...(more > 0 ? { moreChanges: more } : {}),
    },
  );
  return outcome;
}

/** The gate's admission of corrections, bound to this caller. */
export function correctionsAdmission(
  ctx: GateContext,
  via: string,
  allowPossibleDuplicates: boolean,
): CorrectionAdmission {
  return (batch: BatchRecord, corrections) =>
    admitCorrections(
      {
        store: ctx.pipeline.store,
        approvals: ctx.pipeline.approvals,
        policy: ctx.pipeline.approvalPolicy,
        duplicates: ctx.pipeline.duplicates,
        allowPossibleDuplicates,
        by: ctx.actor.name,
        via,
        onDuplicatesConfirmed: (rows) =>
          record(ctx, "batch.duplicates-confirmed", batch.id, "ok", { via, count: rows.length, rows }),
        onHold: (held) =>
          record(ctx, "rows.hold", batch.id, "ok", {
            via,
            round: held.round,
            rows: held.rows,
            reasons: held.reasons,
          }),
      },
      batch,
      corrections,
    );
}

async function recoverThroughGate(
  ctx: GateContext,
  recover: Omit<RecoverBatchOptions, "store" | "enqueuer" | "gate">,
): Promise<RecoverBatchResult> {
  const result = await recoverBatch({
    ...recover,
    store: ctx.pipeline.store,
    enqueuer: ctx.pipeline.enqueuer,
    gate: ctx.pipeline.gate,
  });
  await record(ctx, "batch.recover", result.batchId, "ok", {
    rows: result.rows,
    adopted: result.adopted,
    rejected: result.rejected,
    enqueued: result.enqueued,
    awaitingApproval: !(await ctx.pipeline.gate.mayEnqueue(result.batchId)),
  });
  return result;
}
