/**
 * The one gate for corrections (docs/design.md §3.14), with APPROVAL_THRESHOLDS=USD:1000, real files,
 * a real Redis (unique prefix), the sandbox over loopback and the real payment worker:
 *
 * - on a batch that never needed approval, a corrected result file that makes a failed row pay
 *   900,000.00 to another payee is held for approval, pays nothing, and is paid once approved;
 * - on a batch that was approved, a failed row re-dropped with 250,000.00 to another payee needs
 *   approval again; a row dropped back unchanged, or with only its memo changed, needs none;
 * - every drop is in the audit trail as `system:inbox`, with what changed (old and new values).
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approveBatch, parseApprovalThresholds } from "../../../src/approvals/index.js";
import { AuditTrail } from "../../../src/audit/index.js";
import { isTerminalRowState } from "../../../src/batches/index.js";
import { writeResultFile } from "../../../src/results/index.js";
import { paymentsOfBatch } from "../pipeline/helpers.js";
import { editRow, followPayments, type RetryStack, startRetryStack } from "./helpers.js";

const policy = { thresholds: parseApprovalThresholds("USD:1000"), required: 1, expiresHours: 72 };
let stack: RetryStack;

beforeAll(async () => {
  stack = await startRetryStack("correct-approve", { approval: policy });
});

afterAll(async () => {
  await stack?.close();
});

const HEADER = "reference,from_account,to_account,amount,currency,payer_memo";
const decider = (name: string) => ({ name, kind: "user" as const, role: "approver", mayApprove: true });
const decisions = () => ({
  approvals: stack.pipeline.approvals,
  store: stack.pipeline.store,
  enqueuer: stack.pipeline.enqueuer,
});
const dropAndTake = (name: string, content: string) => stack.dropAndTake(name, content);

async function auditOf(batchId: string) {
  const { data } = await new AuditTrail(stack.pipeline.redis, stack.prefix).list({ limit: 500 });
  return data.filter((e) => e.target === batchId);
}

describe("a corrected result file goes through the approval gate", () => {
  it("holds a correction that makes an unheld batch's failed row pay 900,000.00 to another payee", async () => {
    const { api, pipeline, dataDir } = stack;
    const ref = `CA${randomBytes(4).toString("hex")}`;
    const accepted = await dropAndTake(
      "small.csv",
      `${HEADER}\r\n${ref},ops-checking,vendor-ach,5.13,USD,fails\r\n`,
    );
    expect(accepted).toMatchObject({ kind: "accepted", rows: 1 });
    if (accepted.kind !== "accepted") return;
    const { batchId } = accepted;
    const { store } = pipeline;
    expect(await pipeline.approvals.get(batchId)).toBeUndefined();
    await followPayments(api, store, batchId, (rows) => rows.every((r) => r.state === "failed"));

    const result = await writeResultFile(store, batchId, { dataDir });
    const resultName = path.basename(result.path);
    const corrected = editRow(await readFile(result.path, "utf8"), ref, (c) => {
      c[2] = "vendor-ach-2";
      c[3] = "900000.00";
    });
    const dropped = await dropAndTake(resultName, corrected);
    expect(dropped).toMatchObject({ kind: "accepted", batchId, rows: 0, heldForApproval: 1 });
    if (dropped.kind !== "accepted") return;
    const report = await readFile(dropped.retryReport!, "utf8");
    expect(report).toContain(`reference ${ref}: HELD FOR APPROVAL`);
    expect(report).toContain("USD 900000.00 reaches the USD threshold 1000.00");

    // Nothing was started or sent: the row is still the failed attempt 1, the service has no -r2.
    expect(await store.getRow(batchId, ref)).toMatchObject({ state: "failed", attempt: 1 });
    const approval = await pipeline.approvals.get(batchId);
    expect(approval).toMatchObject({ status: "awaiting-approval", heldFor: "correction", round: 1 });
    expect(approval?.submittedBy).toBe("system:inbox");
    const held = await pipeline.approvals.heldCorrections(batchId);
    expect(held.map((h) => h.changes)).toEqual([
      [
        { field: "amount", old: "5.13", new: "900000.00" },
        { field: "to_account", old: "vendor-ach", new: "vendor-ach-2" },
      ],
    ]);
    await new Promise((r) => setTimeout(r, 300));
    expect((await paymentsOfBatch(api, batchId)).map((p) => p.externalId)).toEqual([ref]);

    // The audit trail says who dropped it and what changed.
    const entries = await auditOf(batchId);
    const correction = entries.find((e) => e.action === "rows.correct");
    expect(correction).toMatchObject({
      actor: { kind: "system", name: "system:inbox" },
      detail: { held: 1, retried: 0 },
    });
    expect(correction?.detail?.changes).toEqual(
      expect.arrayContaining([
        { row: 2, field: "amount", old: "5.13", new: "900000.00" },
        { row: 2, field: "to_account", old: "vendor-ach", new: "vendor-ach-2" },
      ]),
    );
    expect(entries.some((e) => e.action === "rows.hold")).toBe(true);
    // The inbox drop that made the batch is there too.
    expect(entries.find((e) => e.action === "batch.submit")).toMatchObject({
      actor: { kind: "system", name: "system:inbox" },
      from: "inbox",
      outcome: "ok",
      detail: { file: "small.csv", rows: 1 },
    });

    // Approved by someone else: the corrected instruction starts its attempt and is paid.
    const answer = await approveBatch(decisions(), batchId, decider("bob"));
    expect(answer.outcome).toBe("approved");
    const paid = await followPayments(api, store, batchId, (rows) =>
      rows.every((r) => r.attempt === 2 && isTerminalRowState(r.state)),
    );
    expect(paid[0]).toMatchObject({ attempt: 2, instruction: { amount: 90_000_000 } });
    expect(await pipeline.approvals.heldCorrections(batchId)).toEqual([]);
  });

  it("asks again on an approved batch for a changed payment, not for an unchanged retry or a memo", async () => {
    const { api, pipeline, dataDir } = stack;
    const tag = randomBytes(4).toString("hex");
    const [big, failing, memo] = ["B", "F", "M"].map((x) => `CB${tag}-${x}`) as [string, string, string];
    const sheet = [
      HEADER,
      `${big},ops-checking,vendor-ach,1200.00,USD,large`,
      `${failing},ops-checking,vendor-ach,7.13,USD,fails`,
      `${memo},ops-checking,vendor-ach,8.13,USD,fails too`,
      "",
    ].join("\r\n");
    const accepted = await dropAndTake("large.csv", sheet);
    expect(accepted).toMatchObject({ kind: "accepted", rows: 3 });
    if (accepted.kind !== "accepted") return;
    const { batchId } = accepted;
    const { store } = pipeline;
    expect((await pipeline.approvals.get(batchId))?.status).toBe("awaiting-approval");
    expect((await approveBatch(decisions(), batchId, decider("bob"))).outcome).toBe("approved");
    await followPayments(api, store, batchId, (rows) => rows.every((r) => isTerminalRowState(r.state)));

    const result = await writeResultFile(store, batchId, { dataDir });
    const resultName = path.basename(result.path);
    const original = await readFile(result.path, "utf8");
    const corrected = editRow(
      editRow(original, failing, (c) => {
        c[2] = "vendor-ach-2";
        c[3] = "250000.00";
      }),
      memo,
      (c) => {
        c[5] = "only the memo changed";
      },
    );
    const dropped = await dropAndTake(resultName, corrected);
    expect(dropped).toMatchObject({ kind: "accepted", batchId, rows: 1, heldForApproval: 1 });
    // The memo-only correction pays what was approved: it went at once.
    expect(await store.getRow(batchId, memo)).toMatchObject({ attempt: 2 });
    expect(await store.getRow(batchId, failing)).toMatchObject({ state: "failed", attempt: 1 });
    const approval = await pipeline.approvals.get(batchId);
    expect(approval).toMatchObject({
      status: "awaiting-approval",
      heldFor: "correction",
      round: 2,
      approvals: [],
    });
    await new Promise((r) => setTimeout(r, 300));
    expect((await paymentsOfBatch(api, batchId)).some((p) => p.externalId === `${failing}-r2`)).toBe(false);

    // Rejected: the corrected row stays as it was, nothing is paid, the rest of the batch is untouched.
    const { rejectBatch } = await import("../../../src/approvals/index.js");
    expect((await rejectBatch(decisions(), batchId, decider("carol"), "wrong payee")).outcome).toBe(
      "rejected",
    );
    expect(await store.getRow(batchId, failing)).toMatchObject({ state: "failed", attempt: 1 });
    expect(await store.getRow(batchId, big)).toMatchObject({ state: "completed", attempt: 1 });
    expect(await pipeline.approvals.heldCorrections(batchId)).toEqual([]);

    // The failed row dropped back unchanged: a retry that changes nothing goes without approval.
    await followPayments(api, store, batchId, (rows) => rows.every((r) => isTerminalRowState(r.state)));
    const again = await dropAndTake(resultName, original);
    expect(again).toMatchObject({ kind: "accepted", batchId });
    expect(again).not.toHaveProperty("heldForApproval");
    expect(await store.getRow(batchId, failing)).toMatchObject({ attempt: 2 });
  });
});
