/**
 * `payouts demo` as a new user runs it: the built binary, no settings but a temporary DATA_DIR, so it
 * starts its own sandbox and its own redis-server, and must leave a correct result file.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { startSandbox } from "@payouts/sandbox";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApprovalStore } from "../../../src/approvals/index.js";
import { APPROVAL_QUEUE_NAME, APPROVAL_SWEEP_SCHEDULER_ID } from "../../../src/approvals/sweep/index.js";
import { AuthStore } from "../../../src/auth/index.js";
import { BatchStore } from "../../../src/batches/index.js";
import { startPrivateRedis } from "../../../src/demo/private-redis.js";
import { bullPrefix } from "../../../src/pipeline/index.js";
import { spawnCli } from "../pipeline/processes.js";

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), "payouts-demo-"));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe("payouts demo", () => {
  it("runs the sample sheet to completion on embedded defaults and writes the result file", async () => {
    const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: "warn", REDIS_URL: "" };
    const demo = spawnCli(["demo"], env);
    const code = await demo.exited;
    const output = demo.output.join("\n");
    expect(code, output).toBe(0);
    expect(output).toContain("SANDBOX");
    expect(output).toContain("private redis-server");
    expect(output).toMatch(/console: http:\/\/127\.0\.0\.1:\d+\/\s+\(log in as demo \/ \S+;/);
    expect(output).toMatch(/23 of 23 rows final/);

    const outbox = await readdir(path.join(dataDir, "outbox"));
    const resultName = outbox.find((f) => f.endsWith(".result.csv"));
    expect(resultName, outbox.join(", ")).toBeDefined();
    expect(output).toContain(path.join(dataDir, "outbox", resultName!));

    const text = (await readFile(path.join(dataDir, "outbox", resultName!), "utf8")).replace(/^\uFEFF/, "");
    const parsed = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true });
    expect(parsed.errors).toEqual([]);
    const rows = parsed.data;
    expect(rows).toHaveLength(23);
    // Every original column first, in order, then the result columns.
    expect(parsed.meta.fields?.slice(0, 4)).toEqual(["reference", "from_account", "to_account", "amount"]);
    expect(parsed.meta.fields?.slice(-10)).toEqual([
      "status",
      "payment_id",
      "payment_status",
      "debit_usd",
      "fx_rate",
      "error_code",
      "error_message",
      "attempt",
      "idempotency_key",
      "updated_at",
    ]);
    // The sample's one row meant to fail (an amount ending in .13) failed; every other one completed.
    const byRef = new Map(rows.map((r) => [r.reference, r]));
    expect(byRef.get("PAY-2404-022")?.status).toBe("failed");
    expect(rows.filter((r) => r.status === "completed")).toHaveLength(22);
    for (const r of rows) expect(r.payment_id).toMatch(/^pay_/);
    // FX rows carry the USD debit and the rate; USD rows do not.
    const eur = byRef.get("PAY-2404-011");
    expect(Number(eur?.debit_usd)).toBeGreaterThan(0);
    expect(Number(eur?.fx_rate)).toBeGreaterThan(0);
    expect(byRef.get("PAY-2404-001")?.debit_usd).toBe("");
  }, 120_000);

  it("with APPROVAL_THRESHOLDS set, holds its batch like any other and approves it as its own demo approvers, saying so", async () => {
    const held = await mkdtemp(path.join(os.tmpdir(), "payouts-demo-held-"));
    try {
      const env: Record<string, string> = {
        DATA_DIR: held,
        LOG_LEVEL: "warn",
        REDIS_URL: "",
        APPROVAL_THRESHOLDS: "*:0",
        APPROVALS_REQUIRED: "2",
      };
      const demo = spawnCli(["demo"], env);
      const code = await demo.exited;
      const output = demo.output.join("\n");
      expect(code, output).toBe(0);
      expect(output).toMatch(/APPROVAL_THRESHOLDS is set: batch \S+ waits for 2 approval\(s\)/);
      expect(output).toContain("this demo approves it itself");
      expect(output).toContain("approved by demo-approver-1 (demo approver): recorded");
      expect(output).toContain("approved by demo-approver-2 (demo approver): approved");
      expect(output).toMatch(/23 of 23 rows final/);
      const outbox = await readdir(path.join(held, "outbox"));
      const resultName = outbox.find((f) => f.endsWith(".result.csv"));
      const text = (await readFile(path.join(held, "outbox", resultName!), "utf8")).replace(/^\uFEFF/, "");
      const rows = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true }).data;
      expect(rows).toHaveLength(23);
      for (const r of rows)
        expect(r.approvals).toMatch(/^approved \(2 of 2\): demo-approver-1 \S+; demo-approver-2 \S+$/);
    } finally {
      await rm(held, { recursive: true, force: true });
    }
  }, 120_000);

  it("against a real service (PAYOUTS_API_URL) leaves a held batch to an approver, and on a kept REDIS_URL disables its login when it stops", async () => {
    // A Redis of this test's own, given as REDIS_URL: the demo keeps its keys under the plain prefix,
    // which a shared Redis may hold in another version's layout.
    const own = await startPrivateRedis();
    const redisUrl = own.url;
    const held = await mkdtemp(path.join(os.tmpdir(), "payouts-demo-real-"));
    // A sandbox the demo does not know as its own: to it, a real service.
    const service = await startSandbox({ clock: { toInProgressMs: 100, toFinalMs: 100 } });
    const redis = new Redis(redisUrl);
    try {
      const env: Record<string, string> = {
        DATA_DIR: held,
        LOG_LEVEL: "warn",
        REDIS_URL: redisUrl,
        PAYOUTS_API_URL: service.url,
        PAYOUTS_API_KEY: service.apiKey,
        APPROVAL_THRESHOLDS: "*:0",
      };
      const demo = spawnCli(["demo"], env);
      const code = await demo.exited;
      const output = demo.output.join("\n");
      expect(code, output).toBe(1);
      expect(output).not.toContain("this demo approves it itself");
      const m = /batch (\S+) waits for approval \(APPROVAL_THRESHOLDS\) and the demo approves only/.exec(
        output,
      );
      expect(m, output).not.toBeNull();
      const approval = await new ApprovalStore(redis).get(m![1]!);
      expect(approval?.status).toBe("awaiting-approval");
      expect(approval?.approvals).toEqual([]);
      const login = /log in as demo \/ (\S+);/.exec(output);
      expect(login, output).not.toBeNull();
      const auth = new AuthStore(redis);
      expect((await auth.getUser("demo"))?.disabled).toBe(true);
      expect(await auth.checkLogin("demo", login![1]!)).toBeUndefined();
    } finally {
      redis.disconnect();
      await service.close();
      await own.stop();
      await rm(held, { recursive: true, force: true });
    }
  }, 120_000);

  it("runs what `payouts worker` runs: the shared rate limit, the approval sweep and the ledger check of a finished batch", async () => {
    // A Redis of this test's own, so what the demo left in it is the demo's alone.
    const own = await startPrivateRedis();
    const dir = await mkdtemp(path.join(os.tmpdir(), "payouts-demo-parts-"));
    const redis = new Redis(own.url);
    try {
      const demo = spawnCli(["demo"], { DATA_DIR: dir, LOG_LEVEL: "warn", REDIS_URL: own.url });
      const code = await demo.exited;
      const output = demo.output.join("\n");
      expect(code, output).toBe(0);
      const batchId = /submitted \S+ as batch (\S+):/.exec(output)?.[1];
      expect(batchId, output).toBeDefined();
      // Every request went through the rate every worker process shares.
      expect(await redis.hget("payouts:ratelimit", "rate")).toMatch(/^\d+$/);
      // The approval sweep is scheduled, as every worker schedules it.
      const queue = new Queue(APPROVAL_QUEUE_NAME, { connection: redis, prefix: bullPrefix("payouts") });
      try {
        expect(await queue.getJobScheduler(APPROVAL_SWEEP_SCHEDULER_ID)).toBeDefined();
      } finally {
        await queue.close();
      }
      // The finished batch was held against the service's ledger before it was announced.
      const progress = await new BatchStore(redis).progress(batchId!);
      expect(progress?.batch.ledger?.summary, JSON.stringify(progress?.batch)).toMatch(/23 rows match/);
    } finally {
      redis.disconnect();
      await own.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
