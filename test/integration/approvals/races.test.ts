/**
 * Races on a real Redis: every decision is one Lua script, so whatever runs at once, a batch gets
 * exactly one outcome and its rows are queued exactly once (or canceled, never both). Each contender
 * uses its own Redis connection, as separate processes would.
 */

import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ApprovalStore,
  approveBatch,
  type DecisionContext,
  DecisionError,
  rejectBatch,
  settleBatch,
} from "../../../src/approvals/index.js";
import { archivePathFor, readInstructionArchive, recoverBatch } from "../../../src/batches/index.js";
import { createWorkerClient, startPaymentService } from "../../../src/pipeline/index.js";
import { PIPELINE_DEFAULTS } from "../../support/settings.js";
import { deleteKeys, paymentsOfBatch, REDIS_URL, waitForRows } from "../pipeline/helpers.js";
import { type ApprovalHarness, approvalHarness, instruction, policyOf } from "./helpers.js";

const TRIALS = 8;
let one: ApprovalHarness;
let two: ApprovalHarness;

beforeAll(async () => {
  one = await approvalHarness("approvals-race1", policyOf("*:0", 1));
  two = await approvalHarness("approvals-race2", policyOf("*:0", 2));
});

afterAll(async () => {
  await one.close();
  await two.close();
});

const approver = (name: string) => ({ name, mayApprove: true });
const rows = () => [instruction(), instruction(), instruction()];

/** A decision context on its own connection (another process), sharing the harness's queue. */
async function contender(
  h: ApprovalHarness,
  now?: () => Date,
): Promise<DecisionContext & { approvals: ApprovalStore }> {
  return { ...h.ctx, approvals: await h.otherStore(now) };
}

function outcomeOf(settled: PromiseSettledResult<{ outcome: string }>): string {
  if (settled.status === "fulfilled") return settled.value.outcome;
  const err = settled.reason as unknown;
  if (err instanceof DecisionError) return err.code;
  throw err;
}

describe("approval races", () => {
  it("many approvers at once: exactly the required two are counted, one approval decides, rows queued once", async () => {
    const contenders = await Promise.all(Array.from({ length: 6 }, () => contender(two)));
    for (let trial = 0; trial < TRIALS; trial++) {
      const { batchId } = await two.submit(rows(), "carol");
      const results = await Promise.allSettled(
        contenders.map((ctx, i) => approveBatch(ctx, batchId, approver(`approver${i}`))),
      );
      const outcomes = results.map(outcomeOf).sort();
      expect(outcomes).toEqual([
        "NOT_AWAITING_APPROVAL",
        "NOT_AWAITING_APPROVAL",
        "NOT_AWAITING_APPROVAL",
        "NOT_AWAITING_APPROVAL",
        "approved",
        "recorded",
      ]);
      const approval = await two.pipeline.approvals.get(batchId);
      expect(approval?.approvals).toHaveLength(2);
      const jobs = await two.rowsInJobs(batchId);
      expect(jobs).toHaveLength(3);
      expect(new Set(jobs).size).toBe(3);
    }
  });

  it("an approval racing a rejection: exactly one wins; rows all queued or all canceled, never both", async () => {
    const [a, b] = [await contender(one), await contender(one)];
    const seen = new Set<string>();
    for (let trial = 0; trial < TRIALS; trial++) {
      const { batchId } = await one.submit(rows(), "carol");
      // Which call is issued first alternates, so both sides get to win.
      const approve = () => approveBatch(a, batchId, approver("alice"));
      const reject = () => rejectBatch(b, batchId, approver("bob"), "race");
      const [approved, rejected] =
        trial % 2 === 0
          ? await Promise.allSettled([approve(), reject()])
          : await Promise.allSettled([reject(), approve()]).then(([r, ap]) => [ap, r] as const);
      const pair = [outcomeOf(approved), outcomeOf(rejected)];
      expect([
        ["approved", "NOT_AWAITING_APPROVAL"],
        ["NOT_AWAITING_APPROVAL", "rejected"],
      ]).toContainEqual(pair);
      const status = (await one.pipeline.approvals.get(batchId))?.status;
      seen.add(status ?? "none");
      const states = (await one.pipeline.store.listRows(batchId)).map((r) => r.state);
      const jobs = await one.rowsInJobs(batchId);
      if (status === "approved") {
        expect(states).toEqual(["queued", "queued", "queued"]);
        expect(jobs).toHaveLength(3);
      } else {
        expect(status).toBe("rejected");
        expect(states).toEqual(["canceled", "canceled", "canceled"]);
        expect(jobs).toEqual([]);
      }
    }
    // Not asserted (timing decides), but printed: which sides won across the trials.
    console.info(`approval vs rejection, winners over ${TRIALS} trials: ${[...seen].join(", ")}`);
  });

  it("an approval racing the expiry: exactly one outcome, and settling from both sides agrees", async () => {
    const seen = new Set<string>();
    const now = await contender(one);
    const later = await contender(one, () => new Date(Date.now() + 73 * 3_600_000));
    for (let trial = 0; trial < TRIALS; trial++) {
      const { batchId } = await one.submit(rows(), "carol");
      const approve = () =>
        approveBatch(now, batchId, approver("alice")).then(
          (a) => a.outcome as string,
          (e: unknown) => (e instanceof DecisionError ? e.code : Promise.reject(e)),
        );
      const expire = () => later.approvals.expireIfDue(batchId).then((r) => r.outcome as string);
      const [approval, expiry] =
        trial % 2 === 0
          ? await Promise.all([approve(), expire()])
          : await Promise.all([expire(), approve()]).then(([e, ap]) => [ap, e] as const);
      expect([
        ["approved", "not-awaiting"],
        ["NOT_AWAITING_APPROVAL", "expired"],
      ]).toContainEqual([approval, expiry]);
      await Promise.all([settleBatch(now, batchId), settleBatch(later, batchId)]);
      await settleBatch(one.ctx, batchId);
      const states = new Set((await one.pipeline.store.listRows(batchId)).map((r) => r.state));
      const jobs = await one.rowsInJobs(batchId);
      if (approval === "approved") {
        expect([...states]).toEqual(["queued"]);
        expect(jobs).toHaveLength(3);
      } else {
        expect([...states]).toEqual(["canceled"]);
        expect(jobs).toEqual([]);
      }
      expect(await one.pipeline.approvals.unsettledBatchIds()).not.toContain(batchId);
      seen.add(approval === "approved" ? "approved" : "expired");
    }
    console.info(`approval vs expiry, winners over ${TRIALS} trials: ${[...seen].join(", ")}`);
  });
});

describe("a restart between approval and enqueue", () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ clock: { toInProgressMs: 600_000, toFinalMs: 600_000 } });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it("the decision alone (the approving process died before queueing): a worker start and the sweep pay each row once", async () => {
    const h = one;
    const { batchId } = await h.submit(rows(), "carol");
    // Only the atomic decision, as if the approving process was killed right after it.
    expect((await h.pipeline.approvals.approve(batchId, "alice")).outcome).toBe("approved");
    expect(await h.rowsInJobs(batchId)).toEqual([]);
    expect(await h.pipeline.approvals.unsettledBatchIds()).toContain(batchId);
    // A worker starts (it finishes interrupted submissions) while the sweep settles, twice over.
    const [service] = await Promise.all([
      startPaymentService({
        ...PIPELINE_DEFAULTS,
        redisUrl: REDIS_URL,
        prefix: h.prefix,
        approval: policyOf("*:0", 1),
        jobs: { attempts: 3, backoffMs: 50 },
        client: createWorkerClient({ apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: "me" }),
        concurrency: 4,
      }),
      settleBatch(h.ctx, batchId),
      settleBatch(await contender(h), batchId),
    ]);
    try {
      await waitForRows(h.pipeline.store, batchId);
      await settleBatch(h.ctx, batchId);
      const api = createWorkerClient({ apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: "me" });
      const payments = await paymentsOfBatch(api, batchId);
      await api.close();
      expect(payments).toHaveLength(3);
      expect(new Set(payments.map((p) => p.metadata?.payouts_row)).size).toBe(3);
      expect(await h.pipeline.approvals.unsettledBatchIds()).not.toContain(batchId);
      expect((await h.pipeline.store.getBatch(batchId))?.enqueueComplete).toBe(true);
    } finally {
      await service.stop(2000);
    }
  });

  it("a held batch rebuilt after Redis lost everything waits for approval again (its approval was lost too)", async () => {
    const h = await approvalHarness("approvals-recover", policyOf("*:0", 1));
    const client = createWorkerClient({ apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: "me" });
    try {
      const { batchId } = await h.submit(rows(), "carol");
      await deleteKeys(h.pipeline.redis, h.prefix);
      const archivePath = archivePathFor(h.dataDir, batchId);
      const result = await recoverBatch({
        store: h.pipeline.store,
        enqueuer: h.pipeline.enqueuer,
        client,
        archive: await readInstructionArchive(archivePath),
        archivePath,
        gate: h.pipeline.gate,
      });
      expect(result).toMatchObject({ rows: 3, enqueued: 0 });
      expect(await h.pipeline.approvals.get(batchId)).toMatchObject({
        status: "awaiting-approval",
        submittedBy: "carol",
      });
      expect(await h.rowsInJobs(batchId)).toEqual([]);
      expect((await approveBatch(h.ctx, batchId, approver("alice"))).outcome).toBe("approved");
      expect(await h.rowsInJobs(batchId)).toHaveLength(3);
    } finally {
      await client.close();
      await h.close();
    }
  });
});
