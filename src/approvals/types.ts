/**
 * Glossary of approvals. A batch that reaches an approval threshold is **held**: recorded and archived
 * as any batch, its rows `queued` but never handed to the payment queue, while it is
 * `awaiting-approval`. It is **decided** exactly once, atomically in Redis: `approved` (the required
 * number of distinct approvers, none of them its submitter), `rejected` (one rejection), or `expired`
 * (nobody decided in time). Then it is **settled**: an approved batch's rows are queued, a rejected or
 * expired batch's rows are `canceled`. Settling is resumable and idempotent, so a crash between the
 * decision and the queue is finished by the next worker.
 */
import type { ThresholdReached } from "./rules.js";

export const APPROVAL_STATUSES = ["awaiting-approval", "approved", "rejected", "expired"] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

export interface ApproverEntry {
  /** The user's or token's name. */
  by: string;
  /** ISO time of the approval. */
  at: string;
}

/** The approval record of one held batch. */
export interface ApprovalRecord {
  batchId: string;
  status: ApprovalStatus;
  /** Distinct approvers needed. */
  required: number;
  /** Who submitted the batch: a user or token name, or a system identity (`cli:<os user>`, `system:inbox`). */
  submittedBy: string;
  requestedAt: string;
  expiresAt: string;
  /** Why the batch was held. */
  reasons: ThresholdReached[];
  /** Approvals so far, oldest first. */
  approvals: ApproverEntry[];
  /** When it was approved, rejected or expired. */
  decidedAt?: string | undefined;
  /** Who rejected it (`approved`: the last approver; `expired`: nobody). */
  decidedBy?: string | undefined;
  /** A rejection's reason. */
  reason?: string | undefined;
  /** When the decision's follow-up (rows queued or canceled) was done. */
  settledAt?: string | undefined;
  /**
   * What waits: `batch`, the batch as submitted (nothing of it is paid until approved); `correction`,
   * corrected rows of a batch (docs/design.md §3.14), held beside their rows while the rest of the
   * batch goes on as before.
   */
  heldFor?: "batch" | "correction" | undefined;
  /** Which hold this is: 1 for the first, one more for each correction round after a decision. */
  round?: number | undefined;
}

/** What an approval attempt came to. */
export type ApproveOutcome =
  /** This approval was counted; more are needed. */
  | "recorded"
  /** This approval was the last one needed: the batch is approved (its rows are queued next). */
  | "approved"
  /** This approver had approved already: nothing changed (safe to repeat). */
  | "already"
  /** The approver is the batch's submitter. */
  | "self"
  /** The approver is a system identity, never a person. */
  | "system"
  /** The batch is not awaiting approval (decided, or it never needed one). */
  | "not-awaiting"
  /** The batch's rows are still being recorded: try again in a moment. */
  | "not-ready"
  /** It was past its expiry: this call expired it instead. */
  | "expired"
  /** No such held batch. */
  | "missing";

export type RejectOutcome = "rejected" | "system" | "not-awaiting" | "not-ready" | "expired" | "missing";

export interface DecisionResult<O extends string> {
  outcome: O;
  /** The batch's approval status after the call (undefined when missing). */
  status: ApprovalStatus | undefined;
  /** Approvals counted after the call. */
  approvals: number;
  required: number;
}
