/**
 * Public face of the approval sweep (in `payouts worker`): expiry, finishing interrupted follow-ups
 * of decisions, and the `batch.awaiting_approval` notification. Apart from src/approvals' index
 * because it builds on the pipeline, which itself builds on approvals (the gate).
 */
export { type AwaitingApprovalNotice, awaitingApprovalNotice } from "./announce.js";
export {
  APPROVAL_QUEUE_NAME,
  APPROVAL_SWEEP_SCHEDULER_ID,
  type ApprovalService,
  type ApprovalServiceOptions,
  DEFAULT_APPROVAL_SWEEP_EVERY_MS,
  startApprovalService,
} from "./approval-service.js";
export { type ApprovalSweepContext, type ApprovalSweepReport, sweepApprovals } from "./sweep-approvals.js";
