/**
 * The gate's say on corrected rows (docs/design.md §3.14): each valid correction is judged by
 * instruction-rule.ts against the approval policy and the batch's history; the rows that are new
 * instructions needing approval are held beside their rows in a correction round of the batch's
 * approval (src/approvals), the others may start their new attempt at once.
 */
import {
  type ApprovalPolicy,
  type ApprovalStore,
  approvalExpiry,
  type ThresholdReached,
} from "../approvals/index.js";
import type { BatchRecord, BatchStore, RowRecord } from "../batches/index.js";
import type { DuplicateIndex } from "../duplicates/index.js";
import { formatMinorOrRaw } from "../money/index.js";
import type { ChangedField, Correction, CorrectionAdmission } from "../retries/index.js";
import { checkCorrectionDuplicates } from "./correction-duplicates.js";
import { type CorrectedRow, cellChanges, instructionChanges, judgeCorrection } from "./instruction-rule.js";

export interface AdmitContext {
  store: BatchStore;
  approvals: ApprovalStore;
  policy: ApprovalPolicy;
  /** Who corrected (the audit actor's name): the submitter of the correction round. */
  by: string;
  /** How: `result file <name>`, `console`. */
  via: string;
  /** The cross-batch duplicate index (absent: the duplicate window is off). */
  duplicates: DuplicateIndex | undefined;
  /** A person confirmed that corrected rows which are possible duplicates are meant to be paid. */
  allowPossibleDuplicates: boolean;
  /** Told when rows were held (the audit entry of the hold). */
  onHold?: (held: { round: number; rows: number[]; reasons: string[] }) => Promise<void>;
  /** Told when possible duplicates were let through on a person's word (its audit entry). */
  onDuplicatesConfirmed?: (rows: number[]) => Promise<void>;
  now?: () => Date;
}

type Verdicts = Awaited<ReturnType<CorrectionAdmission>>;

export async function admitCorrections(
  ctx: AdmitContext,
  batch: BatchRecord,
  corrections: readonly { row: RowRecord; correction: Correction }[],
): Promise<Verdicts> {
  const verdicts: Verdicts = new Map();
  if (corrections.length === 0) return verdicts;
  const duplicates = await checkCorrectionDuplicates(
    ctx.duplicates,
    batch,
    corrections.map(({ row, correction }) => ({ row, instruction: correction.instruction })),
    ctx.allowPossibleDuplicates,
  );
  for (const { row, correction } of corrections) {
    const refused = duplicates.refused.get(row.rowKey);
    if (refused !== undefined) {
      verdicts.set(row.rowKey, { held: false, refused, changes: cellChanges(row.source, correction.source) });
    }
  }
  if (duplicates.confirmed.length > 0) await ctx.onDuplicatesConfirmed?.(duplicates.confirmed);
  const admissible = corrections.filter(({ row }) => !duplicates.refused.has(row.rowKey));
  if (admissible.length === 0) return verdicts;
  const judged = admissible.map(({ row, correction }) => ({
    row,
    correction,
    corrected: {
      rowKey: row.rowKey,
      before: row.instruction,
      after: correction.instruction,
      changes: instructionChanges({ instruction: row.instruction, source: row.source }, correction),
    } satisfies CorrectedRow,
    cells: cellChanges(row.source, correction.source) as ChangedField[],
  }));
  const judgement = judgeCorrection({
    policy: ctx.policy,
    heldBefore: (await ctx.approvals.get(batch.id)) !== undefined,
    batchTotals: await batchTotals(ctx.store, batch.id),
    rows: judged.map((j) => j.corrected),
  });
  const toHold = judgement.hold ? judged.filter((j) => j.corrected.changes.length > 0) : [];
  for (const j of judged) {
    if (!toHold.includes(j)) verdicts.set(j.row.rowKey, { held: false, changes: j.cells });
  }
  if (toHold.length === 0) return verdicts;

  const why = whyHeld(judgement.approvedBefore, judgement.reasons);
  const unresolved = toHold.filter((j) => j.row.state === "error");
  const holdable = toHold.filter((j) => j.row.state !== "error");
  for (const j of unresolved) {
    // Its last attempt may have paid: a correction waiting days for approval must not hide that.
    verdicts.set(j.row.rowKey, {
      held:
        `not retried: the correction needs approval (${why}), but the row's last attempt has no known ` +
        "outcome (error); retry it unchanged first, which asks the Payouts Service whether it paid, then correct it",
      changes: j.cells,
    });
  }
  if (holdable.length === 0) return verdicts;
  const requestedAt = (ctx.now ?? (() => new Date()))();
  const held = await ctx.approvals.holdCorrections(
    {
      batchId: batch.id,
      submittedBy: ctx.by,
      required: ctx.policy.required,
      requestedAt,
      expiresAt: approvalExpiry(ctx.policy, requestedAt),
      reasons: judgement.reasons,
    },
    holdable.map((j) => ({
      rowKey: j.row.rowKey,
      rowNumber: j.row.rowNumber,
      expectedAttempt: j.row.attempt,
      instruction: j.correction.instruction,
      source: j.correction.source,
      changes: j.corrected.changes.map((c) => ({ ...c })),
      by: ctx.by,
      via: ctx.via,
    })),
  );
  const sentence =
    held.outcome === "held"
      ? `held for approval (correction round ${held.round}: ${why}); nothing of it is paid until an approver ` +
        "approves it (console, API, or `payouts approve " +
        `${batch.id}\`)`
      : `not retried: the correction needs approval (${why}) and ${notHeldReason(held.outcome)}`;
  for (const j of holdable) verdicts.set(j.row.rowKey, { held: sentence, changes: j.cells });
  if (held.outcome === "held") {
    await ctx.onHold?.({
      round: held.round,
      rows: holdable.map((j) => j.row.rowNumber),
      reasons: why === "" ? [] : [why],
    });
  }
  return verdicts;
}

function notHeldReason(outcome: string): string {
  switch (outcome) {
    case "unsettled":
      return "the batch's last approval decision is still being carried out; drop the file again in a minute";
    case "awaiting-batch":
      return "the batch itself still awaits approval; decide on it first";
    default:
      return "the batch was rejected or expired; submit the rows as a new sheet";
  }
}

function whyHeld(approvedBefore: boolean, reasons: readonly ThresholdReached[]): string {
  const reached = reasons.map(
    (r) =>
      `${r.currency} ${formatMinorOrRaw(r.total, r.currency)} reaches the ${r.rule === "*" ? "*" : r.currency} ` +
      `threshold ${formatMinorOrRaw(r.threshold, r.currency)}`,
  );
  if (approvedBefore) reached.unshift("the batch needed approval, so a changed payment needs it again");
  return reached.join("; ");
}

/** The batch's money per currency now, every row (minor units), from its counters. */
async function batchTotals(store: BatchStore, batchId: string): Promise<Record<string, number>> {
  const progress = await store.progress(batchId);
  const totals: Record<string, number> = {};
  for (const [currency, byState] of Object.entries(progress?.totals ?? {})) {
    totals[currency] = Object.values(byState).reduce((sum, n) => sum + (n ?? 0), 0);
  }
  return totals;
}
