/**
 * Who approved a held batch, and when, is told everywhere its outcome is: the result file's
 * `approvals` cell, `payouts status` and the batch-finished notification, all from the one record.
 */
import { describe, expect, it } from "vitest";
import { type ApprovalRecord, approvalsCell, describeApproval } from "../../../src/approvals/index.js";
import type { BatchProgress } from "../../../src/batches/index.js";
import { batchFinishedSummary } from "../../../src/notify/index.js";

const record = (over: Partial<ApprovalRecord> = {}): ApprovalRecord => ({
  batchId: "b1",
  status: "approved",
  required: 2,
  submittedBy: "carol",
  requestedAt: "2026-11-23T09:00:00.000Z",
  expiresAt: "2026-11-26T09:00:00.000Z",
  reasons: [],
  approvals: [
    { by: "alice", at: "2026-11-23T10:00:00.000Z" },
    { by: "bob", at: "2026-11-23T11:00:00.000Z" },
  ],
  decidedAt: "2026-11-23T11:00:00.000Z",
  decidedBy: "bob",
  ...over,
});

describe("the approvals of a batch, shown", () => {
  it("in one result-file cell for each outcome", () => {
    expect(approvalsCell(record())).toBe(
      "approved (2 of 2): alice 2026-11-23T10:00:00.000Z; bob 2026-11-23T11:00:00.000Z",
    );
    expect(
      approvalsCell(
        record({ status: "awaiting-approval", approvals: [record().approvals[0]!], decidedAt: undefined }),
      ),
    ).toBe("awaiting-approval (1 of 2): alice 2026-11-23T10:00:00.000Z");
    expect(
      approvalsCell(record({ status: "rejected", approvals: [], decidedBy: "dave", reason: "wrong month" })),
    ).toBe("rejected by dave 2026-11-23T11:00:00.000Z (wrong month)");
    expect(approvalsCell(record({ status: "expired", approvals: [], decidedBy: undefined }))).toBe(
      "expired 2026-11-23T11:00:00.000Z (0 of 2)",
    );
  });

  it("by payouts status, one line per approver", () => {
    const lines = describeApproval(record());
    expect(lines).toContain("  approved by alice at 2026-11-23T10:00:00.000Z");
    expect(lines).toContain("  approved by bob at 2026-11-23T11:00:00.000Z");
    expect(lines).toContain("  submitted by carol at 2026-11-23T09:00:00.000Z");
  });

  it("in the batch-finished notification, with the submitter", () => {
    const progress = {
      batch: {
        id: "b1",
        sourceName: "payroll.csv",
        createdAt: "2026-11-23T09:00:00.000Z",
        finishedAt: "2026-11-23T12:00:00.000Z",
        rowCount: 2,
        invalidCount: 0,
        submittedBy: "carol",
      },
      counts: { completed: 2 },
      totals: { USD: { completed: 150_000 } },
    } as unknown as BatchProgress;
    const summary = batchFinishedSummary(progress, "/data/outbox/x.csv", "n1", record());
    expect(summary.submittedBy).toBe("carol");
    expect(summary.approval).toEqual({
      status: "approved",
      required: 2,
      approvals: record().approvals,
      decidedAt: "2026-11-23T11:00:00.000Z",
      decidedBy: "bob",
    });
  });
});
