/**
 * The approval gate the submission path asks (SubmissionGate of src/batches): the pure rules decide
 * whether a batch must wait, the store records the hold before the batch itself is recorded.
 */
import type { SubmissionGate } from "../batches/index.js";
import type { ApprovalStore } from "./approval-store.js";
import { type ApprovalPolicy, approvalExpiry, thresholdsReached } from "./rules.js";

export function approvalGate(store: ApprovalStore, policy: ApprovalPolicy): SubmissionGate {
  return {
    async hold({ batchId, submittedBy, requestedAt, totals }) {
      const reasons = thresholdsReached(policy, totals);
      if (reasons.length === 0) return false;
      await store.hold({
        batchId,
        submittedBy,
        required: policy.required,
        requestedAt,
        expiresAt: approvalExpiry(policy, requestedAt),
        reasons,
      });
      return true;
    },
    mayEnqueue: (batchId) => store.mayFeedBatch(batchId),
  };
}
