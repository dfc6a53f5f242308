/**
 * The approval gate in the submission path and the decisions, on a real Redis: what is held, who may
 * approve, what rejection and expiry do to the rows, and that nothing of a held batch reaches the
 * payment queue before it is approved.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  APPROVAL_REJECTED,
  approveBatch,
  DecisionError,
  rejectBatch,
  SYSTEM_IDENTITIES,
  settleBatch,
} from "../../../src/approvals/index.js";
import { DuplicateFileError, resumeIncompleteBatches, submitBatch } from "../../../src/batches/index.js";
import { APPROVALS_COLUMN, RESULT_COLUMNS, writeResultFile } from "../../../src/results/index.js";
import { resultColumnCount, retryRows } from "../../../src/retries/index.js";
import { type ApprovalHarness, approvalHarness, instruction, policyOf, sha } from "./helpers.js";

let h: ApprovalHarness;
const approver = (name: string) => ({ name, mayApprove: true });

beforeAll(async () => {
  // USD 1,000.00 or more in one batch needs two approvers.
  h = await approvalHarness("approvals-gate", policyOf("USD:1000", 2));
});

afterAll(async () => {
  await h.close();
});

const bigRows = () => [instruction({ amount: 60_000 }), instruction({ amount: 40_000 })];

async function decisionError(p: Promise<unknown>): Promise<DecisionError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DecisionError);
  return err as DecisionError;
}

describe("the submission gate", () => {
  it("queues a batch below every threshold at once, as before", async () => {
    const { batchId, awaitingApproval, enqueued } = await h.submit([instruction({ amount: 99_999 })]);
    expect(awaitingApproval).toBe(false);
    expect(enqueued).toBe(1);
    expect(await h.rowsInJobs(batchId)).toHaveLength(1);
    expect(await h.pipeline.approvals.get(batchId)).toBeUndefined();
  });

  it("holds a batch that reaches a threshold: recorded with every row, nothing queued, submitter kept", async () => {
    const { batchId, awaitingApproval, enqueued } = await h.submit(bigRows(), "carol");
    expect(awaitingApproval).toBe(true);
    expect(enqueued).toBe(0);
    expect(await h.rowsInJobs(batchId)).toEqual([]);
    const batch = await h.pipeline.store.getBatch(batchId);
    expect(batch).toMatchObject({ rowsRecorded: true, enqueueComplete: false, submittedBy: "carol" });
    expect((await h.pipeline.store.listRows(batchId)).map((r) => r.state)).toEqual(["queued", "queued"]);
    const approval = await h.pipeline.approvals.get(batchId);
    expect(approval).toMatchObject({
      status: "awaiting-approval",
      required: 2,
      submittedBy: "carol",
      approvals: [],
      reasons: [{ currency: "USD", total: 100_000, threshold: 100_000, rule: "USD" }],
    });
    expect(Date.parse(approval!.expiresAt) - Date.parse(approval!.requestedAt)).toBe(72 * 3_600_000);
  });

  it("a worker start never queues a held batch's rows, and the same file again is a duplicate", async () => {
    const fileSha256 = sha();
    const { batchId } = await h.submit(bigRows(), "carol", { fileSha256 });
    const resumed = await resumeIncompleteBatches(h.pipeline.store, h.pipeline.enqueuer, h.pipeline.gate);
    expect(resumed).not.toContain(batchId);
    expect(await h.rowsInJobs(batchId)).toEqual([]);
    await expect(h.submit(bigRows(), "carol", { fileSha256 })).rejects.toBeInstanceOf(DuplicateFileError);
  });
});

describe("approving", () => {
  it("needs the required number of distinct approvers, never the submitter nor a system identity", async () => {
    const { batchId } = await h.submit(bigRows(), "carol");
    // The submitter, however they ask.
    const self = await decisionError(approveBatch(h.ctx, batchId, approver("carol")));
    expect([self.status, self.code]).toEqual([403, "SELF_APPROVAL"]);
    // No approver role.
    const viewer = await decisionError(approveBatch(h.ctx, batchId, { name: "vera", mayApprove: false }));
    expect([viewer.status, viewer.code]).toEqual([403, "FORBIDDEN"]);
    // The shell, the inbox and the nightly run are not people.
    for (const system of [
      SYSTEM_IDENTITIES.cli("root"),
      SYSTEM_IDENTITIES.inbox,
      SYSTEM_IDENTITIES.schedule,
    ]) {
      const err = await decisionError(approveBatch(h.ctx, batchId, approver(system)));
      expect(err.code).toBe("FORBIDDEN");
    }
    const first = await approveBatch(h.ctx, batchId, approver("alice"));
    expect(first.outcome).toBe("recorded");
    // Repeating is safe and counts once.
    expect((await approveBatch(h.ctx, batchId, approver("alice"))).outcome).toBe("already");
    expect(await h.rowsInJobs(batchId)).toEqual([]);
    const second = await approveBatch(h.ctx, batchId, approver("bob"));
    expect(second.outcome).toBe("approved");
    expect(second.settled).toMatchObject({ outcome: "queued", rows: 2 });
    expect(second.approval.approvals.map((a) => a.by)).toEqual(["alice", "bob"]);
    expect(second.approval.status).toBe("approved");
    expect(await h.rowsInJobs(batchId)).toHaveLength(2);
    expect((await h.pipeline.store.getBatch(batchId))?.enqueueComplete).toBe(true);
    // Decided: a third approver gets 409, an earlier one repeating still gets its answer.
    const late = await decisionError(approveBatch(h.ctx, batchId, approver("dave")));
    expect([late.status, late.code]).toEqual([409, "NOT_AWAITING_APPROVAL"]);
    expect((await approveBatch(h.ctx, batchId, approver("bob"))).outcome).toBe("already");
    const selfLate = await decisionError(approveBatch(h.ctx, batchId, approver("carol")));
    expect(selfLate.code).toBe("SELF_APPROVAL");
  });

  it("a batch submitted from the shell cannot be approved by the console user of the same name", async () => {
    const { batchId } = await h.submit(bigRows(), SYSTEM_IDENTITIES.cli("erin"));
    const self = await decisionError(approveBatch(h.ctx, batchId, approver("erin")));
    expect([self.status, self.code]).toEqual([403, "SELF_APPROVAL"]);
    expect((await approveBatch(h.ctx, batchId, approver("alice"))).outcome).toBe("recorded");
  });

  it("the result file says who approved the batch and when, and is still a result file to re-drop", async () => {
    const { batchId } = await h.submit(bigRows(), "carol");
    const outPath = path.join(h.dataDir, `held.${batchId}.result.csv`);
    const read = async () => {
      await writeResultFile(h.pipeline.store, batchId, { outPath });
      return Papa.parse<string[]>(await readFile(outPath, "utf8"), { skipEmptyLines: true }).data;
    };
    const [waitingHeader, waitingRow] = await read();
    expect(waitingHeader?.at(-1)).toBe(APPROVALS_COLUMN);
    expect(waitingRow?.at(-1)).toBe("awaiting-approval (0 of 2)");
    await approveBatch(h.ctx, batchId, approver("alice"));
    await approveBatch(h.ctx, batchId, approver("bob"));
    const [header, ...rows] = await read();
    expect(header?.slice(-RESULT_COLUMNS.length - 1)).toEqual([...RESULT_COLUMNS, APPROVALS_COLUMN]);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.at(-1)).toMatch(/^approved \(2 of 2\): alice \d{4}-\d\d-\d\dT\S+; bob \d{4}-\d\d-\d\dT\S+$/);
    }
    // The header the retry folder reads from a re-dropped copy: our columns, approvals included.
    const columns = header!.map((original, index) => ({
      index,
      letter: "",
      original,
      canonical: null,
      key: original,
    }));
    expect(resultColumnCount({ columns })).toBe(RESULT_COLUMNS.length + 1);

    // A batch that needed no approval keeps the result file it always had.
    const small = await h.submit([instruction({ amount: 100 })]);
    const smallPath = path.join(h.dataDir, `small.${small.batchId}.result.csv`);
    await writeResultFile(h.pipeline.store, small.batchId, { outPath: smallPath });
    const [smallHeader] = Papa.parse<string[]>(await readFile(smallPath, "utf8")).data;
    expect(smallHeader?.at(-1)).toBe("updated_at");
  });

  it("answers 404 for an unknown batch and 409 for a batch that needed no approval", async () => {
    expect(
      (await decisionError(approveBatch(h.ctx, "b20260101T000000-00000000", approver("alice")))).status,
    ).toBe(404);
    const { batchId } = await h.submit([instruction({ amount: 100 })]);
    const err = await decisionError(approveBatch(h.ctx, batchId, approver("alice")));
    expect([err.status, err.code]).toEqual([409, "NOT_AWAITING_APPROVAL"]);
  });
});

describe("rejecting and expiry", () => {
  it("one rejection ends the batch: every row canceled before any payment, and never retried", async () => {
    const { batchId } = await h.submit(bigRows(), "carol");
    await approveBatch(h.ctx, batchId, approver("alice"));
    const rejected = await rejectBatch(h.ctx, batchId, approver("bob"), "wrong supplier list");
    expect(rejected.outcome).toBe("rejected");
    expect(rejected.approval).toMatchObject({
      status: "rejected",
      decidedBy: "bob",
      reason: "wrong supplier list",
    });
    expect(await h.rowsInJobs(batchId)).toEqual([]);
    const rows = await h.pipeline.store.listRows(batchId);
    expect(rows.map((r) => [r.state, r.errorCode, r.paymentId])).toEqual([
      ["canceled", APPROVAL_REJECTED, undefined],
      ["canceled", APPROVAL_REJECTED, undefined],
    ]);
    expect(rows[0]!.errorMessage).toContain("rejected by bob");
    expect(rows[0]!.errorMessage).toContain("wrong supplier list");
    expect((await h.pipeline.store.getBatch(batchId))?.enqueueComplete).toBe(true);
    // An operator retry cannot pay what was rejected.
    const retry = await retryRows({ store: h.pipeline.store, enqueuer: h.pipeline.enqueuer, batchId });
    expect(retry).toMatchObject({ kind: "done", retried: [] });
    expect(await h.pipeline.store.startNewAttempt(batchId, rows[0]!.rowKey, 1)).toMatchObject({
      outcome: "refused",
    });
    expect(await h.rowsInJobs(batchId)).toEqual([]);
    const again = await decisionError(approveBatch(h.ctx, batchId, approver("dave")));
    expect(again.code).toBe("NOT_AWAITING_APPROVAL");
  });

  it("past its expiry a batch ends expired: by the sweep's call, and lazily when read", async () => {
    const later = new Date(Date.now() + 73 * 3_600_000);
    const future = await h.otherStore(() => later);
    const swept = await h.submit(bigRows(), "carol");
    const read = await h.submit(bigRows(), "carol");
    expect(await future.dueForExpiry()).toEqual(expect.arrayContaining([swept.batchId, read.batchId]));
    expect(await h.pipeline.approvals.dueForExpiry()).not.toContain(swept.batchId);

    expect((await future.expireIfDue(swept.batchId)).outcome).toBe("expired");
    expect((await future.expireIfDue(swept.batchId)).outcome).toBe("not-awaiting");
    expect((await future.get(read.batchId))?.status).toBe("expired");
    for (const { batchId } of [swept, read]) {
      const settled = await settleBatch({ ...h.ctx, approvals: future }, batchId);
      expect(settled).toMatchObject({ outcome: "canceled", rows: 2 });
      const rows = await h.pipeline.store.listRows(batchId);
      expect(rows.map((r) => [r.state, r.errorCode])).toEqual([
        ["canceled", "APPROVAL_EXPIRED"],
        ["canceled", "APPROVAL_EXPIRED"],
      ]);
      expect(await h.rowsInJobs(batchId)).toEqual([]);
    }
    expect(await future.unsettledBatchIds()).not.toContain(swept.batchId);
  });

  it("an approval that arrives after the expiry expires the batch instead", async () => {
    const { batchId } = await h.submit(bigRows(), "carol");
    const later = await h.otherStore(() => new Date(Date.now() + 73 * 3_600_000));
    const err = await decisionError(approveBatch({ ...h.ctx, approvals: later }, batchId, approver("alice")));
    expect(err.code).toBe("NOT_AWAITING_APPROVAL");
    expect(err.message).toContain("expired");
    expect((await h.pipeline.approvals.get(batchId))?.status).toBe("expired");
    expect((await h.pipeline.store.listRows(batchId)).every((r) => r.state === "canceled")).toBe(true);
  });

  it("without a gate nothing is held (the pipeline always passes one; this is the old behaviour)", async () => {
    const result = await submitBatch({
      store: h.pipeline.store,
      enqueuer: h.pipeline.enqueuer,
      instructions: bigRows(),
      fileSha256: sha(),
      sourceName: "x.csv",
      entityId: "me",
      dataDir: h.dataDir,
    });
    expect(result.awaitingApproval).toBeUndefined();
    expect(await h.rowsInJobs(result.batchId)).toHaveLength(2);
  });
});
