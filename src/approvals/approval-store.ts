/**
 * Approval records in Redis. Every decision (approve, reject, expire) is one Lua script over the
 * batch's approval hash, so two approvals at once, an approval racing a rejection or the expiry, all
 * end in exactly one outcome; what follows a decision (queueing or canceling the rows) is listed in
 * `unsettled` by the same script and done by settle-batch.ts, resumably.
 *
 *   <p>:batch:<id>:approval        hash   status, required, submittedBy, requestedAt, expiresAt(Ms),
 *                                         reasons (JSON), decidedAt, decidedBy, reason, settledAt
 *   <p>:batch:<id>:approvers       hash   approver name → ISO time (each approver counted once)
 *   <p>:batch:<id>:approval:lock   string who settles the batch right now (expires)
 *   <p>:approvals:awaiting         zset   held batch ids by expiry (ms): the expiry sweep's index
 *   <p>:approvals:unsettled        set    decided batches whose rows are not queued or canceled yet
 *   <p>:approvals:unannounced      set    held batches whose `batch.awaiting_approval` is not sent yet
 */
import { randomBytes } from "node:crypto";
import { DEFAULT_KEY_PREFIX, redisLayout, type SourceValues } from "../batches/index.js";
import type { PayoutInstruction } from "../intake/index.js";
import { luaScript, type RedisClient } from "../redis/index.js";
import { type ApprovalAudit, EXPIRY_ACTOR } from "./audit.js";
import { CLI_IDENTITY_PREFIX, SYSTEM_IDENTITY_MARK, type ThresholdReached } from "./rules.js";
import {
  APPROVAL_STATUSES,
  type ApprovalRecord,
  type ApprovalStatus,
  type ApproveOutcome,
  type DecisionResult,
  type RejectOutcome,
} from "./types.js";

/**
 * The decision scripts (./lua/, each file saying its KEYS, ARGV and outcomes): approve, reject and
 * expire share decision-head.lua. Who may approve is the rule of rules.ts (a system identity never
 * does; a shell's submitter is the console user of the same name).
 */
const IDENTITIES = { SYSTEM_IDENTITY_MARK, CLI_IDENTITY_PREFIX };
const HOLD = luaScript(new URL("./lua/hold.lua", import.meta.url));
const APPROVE = luaScript(new URL("./lua/approve.lua", import.meta.url), IDENTITIES);
const REJECT = luaScript(new URL("./lua/reject.lua", import.meta.url), { SYSTEM_IDENTITY_MARK });
const EXPIRE = luaScript(new URL("./lua/expire.lua", import.meta.url));

/**
 * Holds corrected rows of a batch for approval (a correction round): what is approved changed, so the
 * approvals start again from none; the corrections wait beside the rows and are applied only once
 * approved. `unsettled`: the last decision is still being followed up; `closed`: the batch itself was
 * rejected or expired; `awaiting-batch`: the batch's own approval is still pending.
 */
const HOLD_CORRECTIONS = luaScript(new URL("./lua/hold-corrections.lua", import.meta.url));

type ScriptAnswer = [string, string, number, number];

function isStatus(value: string): value is ApprovalStatus {
  return (APPROVAL_STATUSES as readonly string[]).includes(value);
}

function resultOf<O extends string>([outcome, status, approvals, required]: ScriptAnswer): DecisionResult<O> {
  return { outcome: outcome as O, status: isStatus(status) ? status : undefined, approvals, required };
}

export interface HoldRequest {
  batchId: string;
  submittedBy: string;
  required: number;
  requestedAt: Date;
  expiresAt: Date;
  reasons: ThresholdReached[];
}

/** A corrected row waiting for the approval of its correction round (applied once approved). */
export interface HeldCorrection {
  rowKey: string;
  rowNumber: number;
  /** The row's attempt when the correction was made: applied only if the row is still on it. */
  expectedAttempt: number;
  instruction: PayoutInstruction;
  source?: SourceValues | undefined;
  /** What changes in what is paid, for the approver. */
  changes: { field: string; old: string; new: string }[];
  /** Who corrected it, and how (`result file <name>`, `console`). */
  by: string;
  via: string;
}

export type HoldCorrectionsOutcome = "held" | "unsettled" | "closed" | "awaiting-batch";

export interface ApprovalStoreOptions {
  prefix?: string;
  now?: () => Date;
  /** Told of every expiry (the sweep's and the lazy one on read). */
  audit?: ApprovalAudit | undefined;
}

/** How long one settler may hold a batch before another may take over (a crashed settler). */
const SETTLE_LOCK_MS = 60_000;

export class ApprovalStore {
  readonly prefix: string;
  private readonly now: () => Date;
  private readonly audit: ApprovalAudit | undefined;
  private readonly batchKey: (id: string) => string;

  constructor(
    readonly redis: RedisClient,
    options: ApprovalStoreOptions = {},
  ) {
    this.prefix = options.prefix ?? DEFAULT_KEY_PREFIX;
    this.now = options.now ?? (() => new Date());
    this.audit = options.audit;
    this.batchKey = redisLayout(this.prefix).batch;
  }

  private approvalKey(id: string) {
    return `${this.batchKey(id)}:approval`;
  }
  private approversKey(id: string) {
    return `${this.batchKey(id)}:approvers`;
  }
  private get awaitingKey() {
    return `${this.prefix}:approvals:awaiting`;
  }
  private get unsettledKey() {
    return `${this.prefix}:approvals:unsettled`;
  }
  private get unannouncedKey() {
    return `${this.prefix}:approvals:unannounced`;
  }

  /** Records that a batch waits for approval. Idempotent: an existing record is left as it is. */
  async hold(request: HoldRequest): Promise<ApprovalStatus> {
    const status = await HOLD.run(
      this.redis,
      [this.approvalKey(request.batchId), this.awaitingKey, this.unannouncedKey],
      [
        request.batchId,
        "batchId",
        request.batchId,
        "required",
        String(request.required),
        "submittedBy",
        request.submittedBy,
        "requestedAt",
        request.requestedAt.toISOString(),
        "expiresAt",
        request.expiresAt.toISOString(),
        "expiresAtMs",
        String(request.expiresAt.getTime()),
        "reasons",
        JSON.stringify(request.reasons),
      ],
    );
    return status as ApprovalStatus;
  }

  private correctionsKey(id: string) {
    return `${this.batchKey(id)}:approval:corrections`;
  }

  /**
   * Holds corrected rows for approval (a correction round; see HOLD_CORRECTIONS). The same round
   * grows while it is still awaiting approval, and its approvals start again from none.
   */
  async holdCorrections(
    request: HoldRequest,
    corrections: readonly HeldCorrection[],
  ): Promise<{ outcome: HoldCorrectionsOutcome; round: number }> {
    const [outcome, round] = (await HOLD_CORRECTIONS.run(
      this.redis,
      [
        this.approvalKey(request.batchId),
        this.approversKey(request.batchId),
        this.awaitingKey,
        this.unannouncedKey,
        this.unsettledKey,
        this.correctionsKey(request.batchId),
      ],
      [
        request.batchId,
        request.submittedBy,
        String(request.required),
        request.requestedAt.toISOString(),
        request.expiresAt.toISOString(),
        String(request.expiresAt.getTime()),
        JSON.stringify(request.reasons),
        ...corrections.flatMap((c) => [c.rowKey, JSON.stringify(c)]),
      ],
    )) as [HoldCorrectionsOutcome, number];
    return { outcome, round: Number(round) };
  }

  /** The corrected rows waiting for the batch's correction round, in sheet order. */
  async heldCorrections(batchId: string): Promise<HeldCorrection[]> {
    const all = await this.redis.hgetall(this.correctionsKey(batchId));
    return Object.values(all)
      .map((json) => JSON.parse(json) as HeldCorrection)
      .sort((a, b) => a.rowNumber - b.rowNumber);
  }

  /** Forgets a held correction (applied, or its round was rejected or expired). */
  async dropHeldCorrection(batchId: string, rowKey: string): Promise<void> {
    await this.redis.hdel(this.correctionsKey(batchId), rowKey);
  }

  private decisionKeys(id: string): string[] {
    return [
      this.approvalKey(id),
      this.approversKey(id),
      this.awaitingKey,
      this.unsettledKey,
      this.unannouncedKey,
      this.batchKey(id),
    ];
  }

  private decisionArgs(id: string): string[] {
    const now = this.now();
    return [id, now.toISOString(), String(now.getTime())];
  }

  async approve(batchId: string, who: string): Promise<DecisionResult<ApproveOutcome>> {
    const answer = await APPROVE.run(this.redis, this.decisionKeys(batchId), [
      ...this.decisionArgs(batchId),
      who,
    ]);
    return resultOf<ApproveOutcome>(answer as ScriptAnswer);
  }

  async reject(batchId: string, who: string, reason: string): Promise<DecisionResult<RejectOutcome>> {
    const answer = await REJECT.run(this.redis, this.decisionKeys(batchId), [
      ...this.decisionArgs(batchId),
      who,
      reason,
    ]);
    return resultOf<RejectOutcome>(answer as ScriptAnswer);
  }

  /** Expires the batch when it is past due. Outcome `expired` only for the call that expired it. */
  async expireIfDue(
    batchId: string,
  ): Promise<DecisionResult<"expired" | "not-due" | "not-awaiting" | "not-ready" | "missing">> {
    const answer = await EXPIRE.run(this.redis, this.decisionKeys(batchId), this.decisionArgs(batchId));
    const result = resultOf<"expired" | "not-due" | "not-awaiting" | "not-ready" | "missing">(
      answer as ScriptAnswer,
    );
    if (result.outcome === "expired") {
      await this.audit?.({ action: "batch.expire", actor: EXPIRY_ACTOR, batchId, outcome: "expired" });
    }
    return result;
  }

  /**
   * The batch's approval record, or undefined when it never needed one. A record past its expiry is
   * expired first (lazily, on read), so no reader ever sees an overdue batch as still awaiting.
   */
  async get(batchId: string): Promise<ApprovalRecord | undefined> {
    let record = await this.read(batchId);
    if (record?.status === "awaiting-approval" && Date.parse(record.expiresAt) <= this.now().getTime()) {
      if ((await this.expireIfDue(batchId)).outcome === "expired") record = await this.read(batchId);
    }
    return record;
  }

  private async read(batchId: string): Promise<ApprovalRecord | undefined> {
    const [hash, approvers] = await Promise.all([
      this.redis.hgetall(this.approvalKey(batchId)),
      this.redis.hgetall(this.approversKey(batchId)),
    ]);
    if (!hash.status || !isStatus(hash.status)) return undefined;
    return {
      batchId,
      status: hash.status,
      required: Number(hash.required ?? 1),
      submittedBy: hash.submittedBy ?? "",
      requestedAt: hash.requestedAt ?? "",
      expiresAt: hash.expiresAt ?? "",
      reasons: hash.reasons ? (JSON.parse(hash.reasons) as ThresholdReached[]) : [],
      approvals: Object.entries(approvers)
        .map(([by, at]) => ({ by, at }))
        .sort((a, b) => a.at.localeCompare(b.at) || a.by.localeCompare(b.by)),
      ...(hash.decidedAt ? { decidedAt: hash.decidedAt } : {}),
      ...(hash.decidedBy ? { decidedBy: hash.decidedBy } : {}),
      ...(hash.reason ? { reason: hash.reason } : {}),
      ...(hash.settledAt ? { settledAt: hash.settledAt } : {}),
      heldFor: hash.heldFor === "correction" ? "correction" : "batch",
      round: Number(hash.round ?? 1),
    };
  }

  /** The status alone (no lazy expiry): what the submission path asks before queueing rows. */
  async status(batchId: string): Promise<ApprovalStatus | undefined> {
    const status = await this.redis.hget(this.approvalKey(batchId), "status");
    return status && isStatus(status) ? status : undefined;
  }

  /**
   * Whether the batch's own rows may be handed to the queue: it never needed approval, was approved,
   * or what waits now is only a correction round (its held rows are not in the queue's reach).
   */
  async mayFeedBatch(batchId: string): Promise<boolean> {
    const [status, heldFor] = await this.redis.hmget(this.approvalKey(batchId), "status", "heldFor");
    return !status || status === "approved" || heldFor === "correction";
  }

  /** Held batches, soonest expiry first. */
  async awaitingBatchIds(limit = 1000): Promise<string[]> {
    return this.redis.zrange(this.awaitingKey, 0, limit - 1);
  }

  /** Held batches whose expiry has passed (the sweep expires them). */
  async dueForExpiry(limit = 1000): Promise<string[]> {
    return this.redis.zrangebyscore(this.awaitingKey, "-inf", this.now().getTime(), "LIMIT", 0, limit);
  }

  /** Decided batches whose rows are not queued or canceled yet. */
  async unsettledBatchIds(): Promise<string[]> {
    return this.redis.smembers(this.unsettledKey);
  }

  /**
   * Takes the right to settle a batch for a while; undefined when someone else settles it now. The
   * settling itself is idempotent, so the lock only keeps two processes from doing the work twice.
   */
  async lockForSettling(batchId: string): Promise<(() => Promise<void>) | undefined> {
    const key = `${this.approvalKey(batchId)}:lock`;
    const token = randomBytes(8).toString("hex");
    const set = await this.redis.set(key, token, "PX", SETTLE_LOCK_MS, "NX");
    if (set !== "OK") return undefined;
    return async () => {
      if ((await this.redis.get(key)) === token) await this.redis.del(key);
    };
  }

  async markSettled(batchId: string): Promise<void> {
    await this.redis
      .multi()
      .hsetnx(this.approvalKey(batchId), "settledAt", this.now().toISOString())
      .srem(this.unsettledKey, batchId)
      .exec();
  }

  /** Forgets a batch in the indexes (its batch record is gone). */
  async dropFromIndexes(batchId: string): Promise<void> {
    await this.redis
      .multi()
      .zrem(this.awaitingKey, batchId)
      .srem(this.unsettledKey, batchId)
      .srem(this.unannouncedKey, batchId)
      .exec();
  }

  /** Held batches not announced yet. */
  async unannouncedBatchIds(): Promise<string[]> {
    return this.redis.smembers(this.unannouncedKey);
  }

  /** True for the one caller that takes the announcement of this batch. */
  async takeAnnouncement(batchId: string): Promise<boolean> {
    return (await this.redis.srem(this.unannouncedKey, batchId)) === 1;
  }

  /** Puts an announcement back (its sending failed; the next sweep tries again). */
  async returnAnnouncement(batchId: string): Promise<void> {
    if ((await this.status(batchId)) === "awaiting-approval")
      await this.redis.sadd(this.unannouncedKey, batchId);
  }
}
