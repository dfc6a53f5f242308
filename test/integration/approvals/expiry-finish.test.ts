/**
 * A held batch that expires in `payouts worker` (a real process, dist/ must be built): its rows all end
 * canceled, and the batch finishes there and then (its final result file), not at the worker's next
 * reconcile sweep a minute later.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../../support/wait.js";
import { type CliProcess, spawnCli, spawnSandbox, stopProcess } from "../pipeline/processes.js";
import { type ApprovalHarness, approvalHarness, instruction, policyOf, REDIS_URL } from "./helpers.js";

/** Held at USD 1,000, expiring 1.8 s after submission. */
const policy = policyOf("USD:1000", 1, 0.0005);
let sandbox: Awaited<ReturnType<typeof spawnSandbox>>;
let h: ApprovalHarness;
let worker: CliProcess;

beforeAll(async () => {
  sandbox = await spawnSandbox();
  h = await approvalHarness("expiry-finish", policy);
  worker = spawnCli(["worker", "--redis-prefix", h.prefix], {
    PAYOUTS_API_URL: sandbox.url,
    PAYOUTS_API_KEY: sandbox.apiKey,
    REDIS_URL,
    DATA_DIR: h.dataDir,
    APPROVAL_THRESHOLDS: "USD:1000",
    APPROVAL_EXPIRES_HOURS: "0.0005",
    LOG_LEVEL: "info",
  });
  await worker.waitFor(/payment worker ready/, 30_000);
});

afterAll(async () => {
  if (worker) await stopProcess(worker);
  await h?.close();
  if (sandbox) await stopProcess(sandbox.proc);
});

describe("a held batch that expires in the worker", () => {
  it("finishes at once: every row canceled, the final result file written", async () => {
    // Submitted after the worker's first reconcile sweep (at its start): the next is a minute away,
    // and the approval sweep (every 15 s) expires the batch well before it.
    const { batchId, awaitingApproval } = await h.submit([instruction({ amount: 150_000 })], "carol");
    expect(awaitingApproval).toBe(true);
    await until(
      "the expired batch to finish",
      async () => ((await h.pipeline.store.getBatch(batchId))?.finishedAt ? true : undefined),
      40_000,
    );
    const rows = await h.pipeline.store.listRows(batchId);
    expect(rows.map((r) => [r.state, r.errorCode])).toEqual([["canceled", "APPROVAL_EXPIRED"]]);
    const outbox = path.join(h.dataDir, "outbox");
    const file = await until("the final result file", async () => {
      const names = await readdir(outbox).catch(() => [] as string[]);
      return names.find((n) => n.includes(batchId) && n.endsWith(".result.csv"));
    });
    // The file says what the row says: canceled, because the approval expired.
    const lines = (await readFile(path.join(outbox, file), "utf8")).trim().split(/\r?\n/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/,canceled,.*APPROVAL_EXPIRED/);
  }, 60_000);
});
