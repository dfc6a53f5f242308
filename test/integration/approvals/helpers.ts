/** Shared set-up of the approval tests: a real Redis under a unique prefix, a pipeline with a policy. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import {
  type ApprovalPolicy,
  ApprovalStore,
  type DecisionContext,
  parseApprovalThresholds,
} from "../../../src/approvals/index.js";
import { type SubmittedInstruction, submitBatch } from "../../../src/batches/index.js";
import { openPipeline, type Pipeline, rowsOfJob } from "../../../src/pipeline/index.js";
import { PIPELINE_DEFAULTS } from "../../support/settings.js";
import { deleteKeys, instruction, REDIS_URL, sha, uniquePrefix } from "../pipeline/helpers.js";

export { instruction, REDIS_URL, sha };

export function policyOf(thresholds: string, required = 1, expiresHours = 72): ApprovalPolicy {
  return { thresholds: parseApprovalThresholds(thresholds), required, expiresHours };
}

export interface ApprovalHarness {
  prefix: string;
  pipeline: Pipeline;
  dataDir: string;
  ctx: DecisionContext;
  /** Submits rows through the real submission path (gate included) as `submittedBy`. */
  submit(
    rows: SubmittedInstruction[],
    submittedBy?: string,
    extra?: { fileSha256?: string },
  ): Promise<{ batchId: string; awaitingApproval: boolean; enqueued: number }>;
  /** The rows of a batch in payment jobs now in the queue (any state), a row key for each time. */
  rowsInJobs(batchId: string): Promise<string[]>;
  /** A second, independent client on the same data (another process would have its own). */
  otherStore(now?: () => Date): Promise<ApprovalStore>;
  close(): Promise<void>;
}

export async function approvalHarness(
  label: string,
  policy: ApprovalPolicy,
  options: { feedWindow?: number } = {},
): Promise<ApprovalHarness> {
  const prefix = uniquePrefix(label);
  const pipeline = openPipeline({
    ...PIPELINE_DEFAULTS,
    redisUrl: REDIS_URL,
    prefix,
    approval: policy,
    jobs: { attempts: 3, backoffMs: 50 },
    ...(options.feedWindow ? { feedWindow: options.feedWindow } : {}),
  });
  const dataDir = await mkdtemp(path.join(tmpdir(), "payouts-approvals-"));
  const extra: Redis[] = [];
  return {
    prefix,
    pipeline,
    dataDir,
    ctx: { approvals: pipeline.approvals, store: pipeline.store, enqueuer: pipeline.enqueuer },
    async submit(rows, submittedBy = "alice", more = {}) {
      const result = await submitBatch({
        store: pipeline.store,
        enqueuer: pipeline.enqueuer,
        gate: pipeline.gate,
        instructions: rows,
        fileSha256: more.fileSha256 ?? sha(),
        sourceName: "approvals.csv",
        entityId: "me",
        dataDir,
        submittedBy,
      });
      return {
        batchId: result.batchId,
        awaitingApproval: result.awaitingApproval === true,
        enqueued: result.enqueued,
      };
    },
    async rowsInJobs(batchId) {
      const jobs = await pipeline.queue.getJobs([
        "waiting",
        "delayed",
        "prioritized",
        "active",
        "completed",
        "failed",
      ]);
      return jobs
        .filter((j) => j?.data.batchId === batchId)
        .flatMap((j) => rowsOfJob(j.data).map((row) => row.rowKey));
    },
    async otherStore(now) {
      const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
      extra.push(redis);
      return new ApprovalStore(redis, { prefix, ...(now ? { now } : {}) });
    },
    async close() {
      await pipeline.queue.obliterate({ force: true }).catch(() => undefined);
      await deleteKeys(pipeline.redis, prefix);
      await pipeline.close();
      for (const r of extra) r.disconnect();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
