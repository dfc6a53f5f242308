import { describe, expect, it } from "vitest";
import type { BatchProgress } from "../../../src/batches/index.js";
import { formatProgress } from "../../../src/cli/commands/status.js";

const counts = {
  queued: 0,
  submitted: 0,
  "in-progress": 0,
  completed: 19_999,
  failed: 0,
  canceled: 0,
  returned: 1,
  rejected: 0,
  error: 0,
  "canceled-unsent": 0,
};

const progress = {
  batch: {
    id: "b20261123T100000-00000002",
    fileSha256: "x",
    sourceName: "june.csv",
    entityId: "me",
    createdAt: "2026-11-23T10:00:00.000Z",
    rowCount: 20_000,
    invalidCount: 0,
    rowsRecorded: true,
    enqueueComplete: true,
    archivePath: undefined,
    sheet: { columns: [], keys: [], format: "csv" },
    finishedAt: "2026-11-23T10:20:00.000Z",
    ledger: {
      at: "2026-11-23T10:21:00.000Z",
      rows: 20_000,
      payments: 20_000,
      matched: 20_000,
      differences: 0,
      byKind: {},
      summary: "ledger: 20,000 rows match, 0 differences",
    },
  },
  counts,
  totals: { USD: { completed: 1_000_000, returned: 5_000 } },
  done: 20_000,
} as BatchProgress;

describe("payouts status", () => {
  it("shows the batch's last ledger check and its returned rows", () => {
    const lines = formatProgress(progress);
    expect(lines).toContain("ledger: 20,000 rows match, 0 differences (checked 2026-11-23T10:21:00.000Z)");
    expect(lines).toContain("  completed 19999, returned 1");
    expect(lines).toContain("  USD: completed 10000.00, returned 50.00");
  });
});
