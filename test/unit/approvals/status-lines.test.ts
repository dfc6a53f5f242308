import { describe, expect, it } from "vitest";
import type { ApprovalRecord } from "../../../src/approvals/index.js";
import type { BatchProgress } from "../../../src/batches/index.js";
import { formatProgress } from "../../../src/cli/commands/status.js";

const progress = {
  batch: {
    id: "b20261123T100000-00000001",
    fileSha256: "x",
    sourceName: "big.csv",
    entityId: "me",
    createdAt: "2026-11-23T10:00:00.000Z",
    rowCount: 2,
    invalidCount: 0,
    rowsRecorded: true,
    enqueueComplete: false,
    archivePath: undefined,
    sheet: { columns: [], keys: [], format: "csv" },
  },
  counts: {
    queued: 2,
    submitted: 0,
    "in-progress": 0,
    completed: 0,
    failed: 0,
    canceled: 0,
    returned: 0,
    rejected: 0,
    error: 0,
    "canceled-unsent": 0,
  },
  totals: { USD: { queued: 2_000_000 } },
  done: 0,
} as BatchProgress;

const record: ApprovalRecord = {
  batchId: progress.batch.id,
  status: "awaiting-approval",
  required: 2,
  submittedBy: "system:inbox",
  requestedAt: "2026-11-23T10:00:00.000Z",
  expiresAt: "2026-11-26T10:00:00.000Z",
  reasons: [],
  approvals: [{ by: "alice", at: "2026-11-23T11:00:00.000Z" }],
};

describe("payouts status shows the approval", () => {
  it("who submitted, who approved when, and that nothing moves until approved", () => {
    const lines = formatProgress(progress, record);
    expect(lines).toContain(
      "approval: awaiting-approval (1 of 2 approval(s); expires 2026-11-26T10:00:00.000Z); nothing is paid until approved",
    );
    expect(lines).toContain("  submitted by system:inbox at 2026-11-23T10:00:00.000Z");
    expect(lines).toContain("  approved by alice at 2026-11-23T11:00:00.000Z");
    expect(lines.join("\n")).not.toContain("submission not finished");
  });

  it("a rejection with who and why", () => {
    const lines = formatProgress(progress, {
      ...record,
      status: "rejected",
      decidedBy: "bob",
      decidedAt: "2026-11-23T12:00:00.000Z",
      reason: "wrong list",
    });
    expect(lines).toContain("approval: rejected by bob at 2026-11-23T12:00:00.000Z: wrong list");
  });
});
