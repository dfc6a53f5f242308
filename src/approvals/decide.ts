/**
 * Approving and rejecting a batch, as the API, the console and `payouts approve|reject` (through the
 * API) do it: the atomic decision, its answer in the API's terms (403 SELF_APPROVAL, 403 FORBIDDEN,
 * 409 when not awaiting approval), the audit entry, and at once the follow-up (rows queued or
 * canceled). If the follow-up fails here, the worker's approval sweep finishes it.
 */

import { PayoutsError } from "../errors/index.js";
import type { LogSink } from "../logging/index.js";
import type { ApprovalAudit } from "./audit.js";
import { EXPIRY_ACTOR } from "./audit.js";
import { isSystemIdentity } from "./rules.js";
import { type SettleContext, type SettleResult, settleBatch } from "./settle-batch.js";
import type { ApprovalRecord } from "./types.js";

export interface DecisionContext extends SettleContext {
  audit?: ApprovalAudit | undefined;
  logger?: LogSink | undefined;
}

export interface Decider {
  /** The user's or token's name. */
  name: string;
  /** Whether their role may approve (the `batches.approve` permission of src/auth). */
  mayApprove: boolean;
  /** The request's address, for the audit trail. */
  from?: string | undefined;
  /** A console user or an API token, and their role (for the audit trail). */
  kind?: "user" | "token" | undefined;
  role?: string | undefined;
}

export type DecisionErrorCode = "FORBIDDEN" | "SELF_APPROVAL" | "NOT_FOUND" | "NOT_AWAITING_APPROVAL";

export class DecisionError extends PayoutsError {
  override readonly name = "DecisionError";
  constructor(
    readonly status: 403 | 404 | 409,
    override readonly code: DecisionErrorCode,
    message: string,
  ) {
    super(code, message, { kind: status === 403 ? "forbidden" : status === 404 ? "not-found" : "conflict" });
  }
}

export interface DecisionAnswer {
  /** `recorded` (more approvals needed), `approved`, `already` (this approver had approved) or `rejected`. */
  outcome: "recorded" | "approved" | "already" | "rejected";
  approval: ApprovalRecord;
  /** The follow-up done by this call, when the decision was made by it. */
  settled?: SettleResult | undefined;
}

export async function approveBatch(
  ctx: DecisionContext,
  batchId: string,
  who: Decider,
): Promise<DecisionAnswer> {
  return decide(ctx, batchId, who, "approve");
}

export async function rejectBatch(
  ctx: DecisionContext,
  batchId: string,
  who: Decider,
  reason: string,
): Promise<DecisionAnswer> {
  return decide(ctx, batchId, who, "reject", reason);
}

/** Longest rejection reason kept (it is shown in result files and notifications). */
export const MAX_REASON_LENGTH = 500;

async function decide(
  ctx: DecisionContext,
  batchId: string,
  who: Decider,
  action: "approve" | "reject",
  reason = "",
): Promise<DecisionAnswer> {
  const auditAction = action === "approve" ? "batch.approve" : "batch.reject";
  const audit = async (outcome: string, detail?: Record<string, string | number>) => {
    await ctx.audit?.({
      action: auditAction,
      actor: who.name,
      actorKind: who.kind,
      actorRole: who.role,
      batchId,
      outcome,
      from: who.from,
      ...(detail ? { detail } : {}),
    });
  };
  const refuse = async (err: DecisionError): Promise<never> => {
    await audit(`refused: ${err.code}`);
    throw err;
  };
  if (!who.mayApprove || isSystemIdentity(who.name)) {
    return refuse(
      new DecisionError(
        403,
        "FORBIDDEN",
        `${who.name} may not approve or reject batches (the approver role may)`,
      ),
    );
  }
  const text = reason.trim().slice(0, MAX_REASON_LENGTH);
  const result =
    action === "approve"
      ? await ctx.approvals.approve(batchId, who.name)
      : await ctx.approvals.reject(batchId, who.name, text);
  switch (result.outcome) {
    case "missing": {
      if (!(await ctx.store.getBatch(batchId))) {
        throw new DecisionError(404, "NOT_FOUND", `no batch ${batchId}`);
      }
      return refuse(
        new DecisionError(409, "NOT_AWAITING_APPROVAL", `batch ${batchId} did not need approval`),
      );
    }
    case "self":
      return refuse(
        new DecisionError(
          403,
          "SELF_APPROVAL",
          `${who.name} submitted batch ${batchId} and cannot approve it; another approver must`,
        ),
      );
    case "system":
      return refuse(
        new DecisionError(403, "FORBIDDEN", `${who.name} is not a person and cannot decide on batches`),
      );
    case "not-ready":
      return refuse(
        new DecisionError(
          409,
          "NOT_AWAITING_APPROVAL",
          `batch ${batchId} is still being recorded; try again in a moment`,
        ),
      );
    case "expired":
      await ctx.audit?.({ action: "batch.expire", actor: EXPIRY_ACTOR, batchId, outcome: "expired" });
      await settleQuietly(ctx, batchId);
      return refuse(
        new DecisionError(409, "NOT_AWAITING_APPROVAL", `batch ${batchId} expired before it was approved`),
      );
    case "not-awaiting":
      return refuse(
        new DecisionError(
          409,
          "NOT_AWAITING_APPROVAL",
          `batch ${batchId} is not awaiting approval (it is ${result.status})`,
        ),
      );
    case "already":
    case "recorded":
    case "approved":
    case "rejected": {
      const outcome = result.outcome;
      if (outcome !== "already") {
        await audit(outcome, {
          approvals: result.approvals,
          required: result.required,
          ...(text && action === "reject" ? { reason: text } : {}),
        });
      }
      const settled =
        outcome === "approved" || outcome === "rejected" ? await settleQuietly(ctx, batchId) : undefined;
      const approval = await ctx.approvals.get(batchId);
      if (!approval) throw new Error(`the approval record of batch ${batchId} vanished`);
      return { outcome, approval, ...(settled ? { settled } : {}) };
    }
  }
}

/** Settles now; a failure is left to the worker's sweep (the batch stays listed as unsettled). */
async function settleQuietly(ctx: DecisionContext, batchId: string): Promise<SettleResult | undefined> {
  try {
    return await settleBatch(ctx, batchId);
  } catch (err) {
    ctx.logger?.warn(
      { batchId, err },
      "approval decided; queueing or canceling its rows is left to the worker's sweep",
    );
    return undefined;
  }
}
