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
        return `approval: expired at ${record.decidedAt ?? record.expiresAt} (${count}); every row canceled`;
    }
  })();
  return [
    head,
    `  submitted by ${record.submittedBy || "unknown"} at ${record.requestedAt}`,
    ...record.approvals.map((a) => `  approved by ${a.by} at ${a.at}`),
  ];
}
