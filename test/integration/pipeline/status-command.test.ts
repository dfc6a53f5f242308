/** `payouts status` as a user runs it (the built CLI, as a process), on a batch the pipeline paid. */

import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instruction, type PipelineHarness, pipelineHarness, REDIS_URL, waitForRows } from "./helpers.js";
import { spawnCli } from "./processes.js";

let sandbox: RunningSandbox;
let h: PipelineHarness;
let batchId: string;

beforeAll(async () => {
  sandbox = await startSandbox({ clock: { toInProgressMs: 600_000, toFinalMs: 600_000 } });
  h = await pipelineHarness(sandbox, "status");
  await h.startWorker();
  batchId = await h.submit([
    instruction({ amount: 125_000 }),
    instruction({ amount: 2_550 }),
    instruction({ originatingAccountId: "acct_payroll_unverified", amount: 999 }),
  ]);
  await waitForRows(h.store, batchId);
});

afterAll(async () => {
  await h.close();
  await sandbox.close();
});

async function status(args: string[]): Promise<{ code: number | string; out: string }> {
  const proc = spawnCli(["status", ...args, "--redis-prefix", h.prefix], { REDIS_URL });
  const code = await proc.exited;
  return { code, out: proc.output.join("\n") };
}

describe("payouts status", () => {
  it("--json gives counts by state and money per currency and state", async () => {
    const { code, out } = await status([batchId, "--json"]);
    expect(code).toBe(0);
    const report = JSON.parse(out);
    expect(report.rows).toBe(3);
    expect(report.counts).toMatchObject({ submitted: 2, rejected: 1, queued: 0 });
    expect(report.totals.USD).toEqual({ submitted: 127_550, rejected: 999 });
    expect(report.final).toBe(1);
  });

  it("prints plain lines off a terminal, with amounts in major units", async () => {
    const { code, out } = await status([batchId]);
    expect(code).toBe(0);
    expect(out).toContain(`batch ${batchId}`);
    expect(out).toContain("rows: 3 valid, 0 invalid; 1 of 3 final");
    expect(out).toContain("USD: submitted 1275.50, rejected 9.99");
  });

  it("lists the latest batches without a batch id, and exits 2 for an unknown batch", async () => {
    const list = await status([]);
    expect(list.code).toBe(0);
    expect(list.out).toContain(batchId);
    const missing = await status(["b-no-such-batch"]);
    expect(missing.code).toBe(2);
    expect(missing.out).toMatch(/no batch b-no-such-batch/);
  });
});
