/**
 * Public face of approvals (maker–checker, docs/design.md §3.10): the rules, the approval records and their
 * atomic decisions, the submission gate, and settling a decided batch. The worker's periodic sweep
 * (expiry, settling, announcements) is in ./sweep/, which builds on the pipeline.
 */
export {
  ApprovalStore,
  type ApprovalStoreOptions,
  type HeldCorrection,
  type HoldCorrectionsOutcome,
  type HoldRequest,
} from "./approval-store.js";
export { type ApprovalAudit, type ApprovalAuditEntry, approvalAuditTo, EXPIRY_ACTOR } from "./audit.js";
export {
  approveBatch,
  type Decider,
  type DecisionAnswer,
  type DecisionContext,
  DecisionError,
  type DecisionErrorCode,
  MAX_REASON_LENGTH,
  rejectBatch,
} from "./decide.js";
export { approvalsCell, describeApproval } from "./describe.js";
export { approvalGate } from "./gate.js";
export { cliIdentity } from "./identity.js";
export {
  ANY_CURRENCY,
  type ApprovalPolicy,
  ApprovalRuleError,
  type ApprovalThreshold,
  approvalExpiry,
  isSystemIdentity,
  NO_APPROVAL_POLICY,
  parseApprovalThresholds,
  SYSTEM_IDENTITIES,
  type ThresholdReached,
  thresholdsReached,
} from "./rules.js";
export {
  APPROVAL_EXPIRED,
  APPROVAL_REJECTED,
  cancellationOf,
  type SettleContext,
  type SettleResult,
  settleBatch,
} from "./settle-batch.js";
export {
  APPROVAL_STATUSES,
  type ApprovalRecord,
  type ApprovalStatus,
  type ApproveOutcome,
  type ApproverEntry,
  type DecisionResult,
  type RejectOutcome,
} from "./types.js";
