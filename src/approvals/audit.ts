/**
 * What approvals tell the audit trail: every approval, rejection and expiry, and every refused attempt
 * (a submitter trying to approve their own batch is worth seeing). The trail itself lives in
 * src/audit; approvals only need somewhere to write, so it is passed in.
 */
export interface ApprovalAuditEntry {
  action: "batch.approve" | "batch.reject" | "batch.expire";
  /** The user or token name; `system:expiry` for an expiry. */
  actor: string;
  batchId: string;
  /** What came of it: `recorded`, `approved`, `rejected`, `expired`, or why it was refused. */
  outcome: string;
  /** Where the request came from (an IP address), when it came over HTTP. */
  from?: string | undefined;
  detail?: Record<string, string | number>;
}

export type ApprovalAudit = (entry: ApprovalAuditEntry) => Promise<void>;

/** The actor of an expiry: no person decided it. */
export const EXPIRY_ACTOR = "system:expiry";
