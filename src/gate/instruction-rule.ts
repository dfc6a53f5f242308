/**
 * The gate's rule (pure: no I/O), docs/design.md §3.14 "every instruction through one gate":
 *
 * - A correction that changes what is paid (amount, currency, payee, paying account or delivery) is a
 *   NEW instruction. The approval policy is evaluated on the corrected rows and on the batch's total
 *   with them; on a batch that needed approval before (held, approved or not) any such change needs
 *   approval again. The corrected rows are then held: nothing of them is sent until approved.
 * - A correction that changes only words (memo, note, purpose, metadata) and a retry that changes
 *   nothing pay what was checked already: they need no approval.
 */
import { type ApprovalPolicy, type ThresholdReached, thresholdsReached } from "../approvals/index.js";
import type { SourceValues } from "../batches/index.js";
import type { PayoutInstruction } from "../intake/index.js";
import { formatMinorOrRaw } from "../money/index.js";

/** One changed field of a row, for people and the audit trail. */
export interface FieldChange {
  field: string;
  old: string;
  new: string;
}

/** The fields whose change makes a correction a new instruction, by the name a sheet gives them. */
export const INSTRUCTION_FIELDS = ["amount", "currency", "to_account", "from_account", "delivery"] as const;

function moneyText(i: PayoutInstruction): string {
  return formatMinorOrRaw(i.amount, i.currency);
}

/** A cell of the row's sheet values as text (blank when absent). */
function cellText(source: SourceValues | undefined, key: string): string {
  const value = source?.[key];
  return value === undefined || value === null ? "" : String(value);
}

/**
 * What a correction changes in what is paid: resolved values compared (an account named by another
 * alias is the same account), shown as the sheet wrote them when it did.
 */
export function instructionChanges(
  before: { instruction: PayoutInstruction; source?: SourceValues | undefined },
  after: { instruction: PayoutInstruction; source?: SourceValues | undefined },
): FieldChange[] {
  const a = before.instruction;
  const b = after.instruction;
  const changes: FieldChange[] = [];
  if (a.amount !== b.amount || a.currency !== b.currency) {
    changes.push({ field: "amount", old: moneyText(a), new: moneyText(b) });
  }
  if (a.currency !== b.currency) changes.push({ field: "currency", old: a.currency, new: b.currency });
  const account = (field: "to_account" | "from_account", x: string, y: string) => {
    if (x === y) return;
    changes.push({
      field,
      old: cellText(before.source, field) || x,
      new: cellText(after.source, field) || y,
    });
  };
  account("to_account", a.receivingAccountId, b.receivingAccountId);
  account("from_account", a.originatingAccountId, b.originatingAccountId);
  if (a.deliveryPreference !== b.deliveryPreference) {
    changes.push({ field: "delivery", old: a.deliveryPreference, new: b.deliveryPreference });
  }
  return changes;
}

/** Every sheet cell a correction changed (for the audit trail), the words included. */
export function cellChanges(
  before: SourceValues | undefined,
  after: SourceValues | undefined,
): FieldChange[] {
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  const changes: FieldChange[] = [];
  for (const key of [...keys].sort()) {
    const old = cellText(before, key);
    const now = cellText(after, key);
    if (old !== now) changes.push({ field: key, old, new: now });
  }
  return changes;
}

/** A corrected row as the rule sees it. */
export interface CorrectedRow {
  rowKey: string;
  before: PayoutInstruction;
  after: PayoutInstruction;
  /** What changes in what is paid (instructionChanges); empty: only words changed. */
  changes: readonly FieldChange[];
}

export interface CorrectionJudgement {
  /** True: the corrected rows that are new instructions wait for approval. */
  hold: boolean;
  /** Why, in the policy's terms (thresholds reached); empty for "needed approval before". */
  reasons: ThresholdReached[];
  /** The batch needed approval before: any new instruction needs it again. */
  approvedBefore: boolean;
}

/**
 * Whether corrected rows must wait for approval. `batchTotals`: the batch's money per currency now
 * (minor units, every row); `heldBefore`: the batch has an approval record (it needed approval).
 */
export function judgeCorrection(input: {
  policy: ApprovalPolicy;
  heldBefore: boolean;
  batchTotals: Readonly<Record<string, number>>;
  rows: readonly CorrectedRow[];
}): CorrectionJudgement {
  const newInstructions = input.rows.filter((r) => r.changes.length > 0);
  if (newInstructions.length === 0) return { hold: false, reasons: [], approvedBefore: input.heldBefore };
  const corrected: Record<string, number> = {};
  const withThem: Record<string, number> = { ...input.batchTotals };
  for (const r of newInstructions) {
    corrected[r.after.currency] = (corrected[r.after.currency] ?? 0) + r.after.amount;
    withThem[r.before.currency] = (withThem[r.before.currency] ?? 0) - r.before.amount;
    withThem[r.after.currency] = (withThem[r.after.currency] ?? 0) + r.after.amount;
  }
  const reasons = thresholdsReached(input.policy, corrected);
  for (const reached of thresholdsReached(input.policy, withThem)) {
    if (!reasons.some((r) => r.currency === reached.currency)) reasons.push(reached);
  }
  return {
    hold: input.heldBefore || reasons.length > 0,
    reasons,
    approvedBefore: input.heldBefore,
  };
}

/** At most this many changes are written in one audit entry (the rest are counted). */
export const MAX_AUDITED_CHANGES = 50;

/** Changes per row for the audit trail, capped; `more` counts what was left out. */
export function auditedChanges(rows: readonly { rowNumber: number; changes: readonly FieldChange[] }[]): {
  changes: { row: number; field: string; old: string; new: string }[];
  more: number;
} {
  const all = rows.flatMap((r) => r.changes.map((c) => ({ row: r.rowNumber, ...c })));
  return { changes: all.slice(0, MAX_AUDITED_CHANGES), more: Math.max(0, all.length - MAX_AUDITED_CHANGES) };
}
