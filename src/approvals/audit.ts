/**
 * What approvals tell the audit trail: every approval, rejection and expiry, and every refused attempt
 * (a submitter trying to approve their own batch is worth seeing), written to the audit trail of
 * src/audit through {@link approvalAuditTo}.
 */
import type { AuditTrail } from "../audit/index.js";

export interface ApprovalAuditEntry {
  action: "batch.approve" | "batch.reject" | "batch.expire";
  /** The user or token name; `system:expiry` for an expiry. */
  actor: string;
  /** A console user or an API token (undefined: a system identity). */
  actorKind?: "user" | "token" | undefined;
  actorRole?: string | undefined;
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

/** Approvals' entries in the audit trail: `denied` for a refused attempt, `ok` otherwise. */
export function approvalAuditTo(trail: Pick<AuditTrail, "record">): ApprovalAudit {
  return async (entry) => {
    await trail.record({
      actor: {
        kind: entry.actorKind ?? "system",
        name: entry.actor,
        ...(entry.actorRole ? { role: entry.actorRole } : {}),
      },
      action: entry.action,
      target: entry.batchId,
      from: entry.from ?? "worker",
      outcome: entry.outcome.startsWith("refused") ? "denied" : "ok",
      detail: { result: entry.outcome, ...entry.detail },
    });
  };
}
