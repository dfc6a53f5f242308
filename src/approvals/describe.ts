/** An approval record in words (pure): what `payouts status` prints. */
import type { ApprovalRecord } from "./types.js";

export function describeApproval(record: ApprovalRecord): string[] {
  const count = `${record.approvals.length} of ${record.required} approval(s)`;
  const head = (() => {
    switch (record.status) {
      case "awaiting-approval":
        return `approval: awaiting-approval (${count}; expires ${record.expiresAt}); nothing is paid until approved`;
      case "approved":
        return `approval: approved at ${record.decidedAt ?? "?"} (${count})`;
      case "rejected":
        return `approval: rejected by ${record.decidedBy ?? "?"} at ${record.decidedAt ?? "?"}: ${record.reason ?? ""}`;
      case "expired":
        return `approval: expired at ${record.decidedAt ?? record.expiresAt} (${count}); ${
          record.heldFor === "correction" ? "the corrected rows stay as they were" : "every row canceled"
        }`;
    }
  })();
  return [
    record.heldFor === "correction"
      ? `${head} [correction round ${record.round ?? 1}: corrected rows only]`
      : head,
    `  submitted by ${record.submittedBy || "unknown"} at ${record.requestedAt}`,
    ...record.approvals.map((a) => `  approved by ${a.by} at ${a.at}`),
  ];
}

/**
 * The approvals of a held batch in one cell, for the result file's `approvals` column: who approved and
 * when, or who rejected it, when and why, or when it expired. Same on every row of the batch.
 */
export function approvalsCell(record: ApprovalRecord): string {
  const approvers = record.approvals.map((a) => `${a.by} ${a.at}`).join("; ");
  const count = `${record.approvals.length} of ${record.required}`;
  switch (record.status) {
    case "approved":
      return `approved (${count}): ${approvers}`;
    case "awaiting-approval":
      return `awaiting-approval (${count})${approvers ? `: ${approvers}` : ""}`;
    case "rejected":
      return (
        `rejected by ${record.decidedBy ?? "?"} ${record.decidedAt ?? ""}` +
        `${record.reason ? ` (${record.reason})` : ""}${approvers ? `; approved before: ${approvers}` : ""}`
      );
    case "expired":
      return `expired ${record.decidedAt ?? record.expiresAt} (${count})${approvers ? `: ${approvers}` : ""}`;
  }
}
