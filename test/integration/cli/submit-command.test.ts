/**
 * `payouts submit` then `payouts worker`, as an operator runs them: built binaries in child
 * processes, a sandbox over loopback, a real Redis, a temporary DATA_DIR.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPayoutsClient, type PayoutsClient } from "../../../src/payouts-api/index.js";
import { deleteKeys, paymentsOfBatch, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";
import { spawnCli } from "../pipeline/processes.js";

let sandbox: RunningSandbox;
let api: PayoutsClient;
let redis: Redis;
let dataDir: string;
const prefix = uniquePrefix("submit-cli");
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ clock: { toInProgressMs: 50, toFinalMs: 50 } });
  api = createPayoutsClient({ entityId: "me", baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  redis = new Redis(REDIS_URL);
  dataDir = await mkdtemp(path.join(os.tmpdir(), "payouts-submit-"));
  env = {
    PAYOUTS_API_URL: sandbox.url,
    PAYOUTS_API_KEY: sandbox.apiKey,
    REDIS_URL,
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
  };
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
  await api.close();
  await sandbox.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function run(args: string[]) {
  const p = spawnCli(args, env);
  const code = await p.exited;
  return { code, output: p.output };
}

describe("payouts submit", () => {
  it("queues nothing and exits 1 when a row is invalid (the default --on-invalid reject)", async () => {
    const report = path.join(dataDir, "mistakes.validation.csv");
    const r = await run([
      "submit",
      "samples/payouts-mistakes.csv",
      "--report",
      report,
      "--redis-prefix",
      prefix,
    ]);
    expect(r.code).toBe(1);
    expect(r.output.join("\n")).toContain("nothing was queued");
    expect(await redis.keys(`${prefix}:batch:*`)).toEqual([]);
  });

  it("dry-runs: validates, shows totals per currency, queues nothing", async () => {
    const r = await run(["submit", "samples/payouts-valid.csv", "--dry-run", "--redis-prefix", prefix]);
    expect(r.code).toBe(0);
    expect(r.output.join("\n")).toMatch(/EUR 4200\.00 in 1 row/);
    expect(await redis.keys(`${prefix}:batch:*`)).toEqual([]);
  });

  it("submits the valid sample, the worker pays every row once, and the same file is refused after", async () => {
    const submitted = await run(["submit", "samples/payouts-valid.csv", "--redis-prefix", prefix]);
    expect(submitted.code).toBe(0);
    const batchId = submitted.output.find((l) => /^b\d{8}T\d{6}-[0-9a-f]{8}$/.test(l));
    expect(batchId, submitted.output.join("\n")).toBeDefined();
    const archived = await readdir(path.join(dataDir, "archive"));
    expect(archived).toContain(`${batchId}.csv`);
    expect(archived).toContain(`${batchId}.instructions.ndjson`);

    const worker = spawnCli(["worker", "--redis-prefix", prefix, "--concurrency", "8"], env);
    try {
      const deadline = Date.now() + 30_000;
      let payments = await paymentsOfBatch(api, batchId!);
      while (payments.length < 23 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        payments = await paymentsOfBatch(api, batchId!);
      }
      expect(payments).toHaveLength(23);
      expect(new Set(payments.map((p) => p.externalId)).size).toBe(23);
    } finally {
      worker.child.kill("SIGTERM");
      expect(await worker.exited).toBe(0);
    }

    // `payouts serve` hands out the batch's result file, to a logged-in caller only: a viewer's token
    // made with `payouts token create`, sent as a Bearer token. Every row, with its payment.
    const created = await run([
      "token",
      "create",
      "submit-test",
      "--role",
      "viewer",
      "--redis-prefix",
      prefix,
    ]);
    expect(created.code, created.output.join("\n")).toBe(0);
    const token = created.output.find((l) => /^pyt_\S+$/.test(l.trim()))?.trim();
    expect(token, created.output.join("\n")).toBeDefined();
    const auth = { headers: { authorization: `Bearer ${token}` } };
    const server = spawnCli(["serve", "--port", "0", "--redis-prefix", prefix], env);
    try {
      const line = await server.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/);
      const base = /(http:\/\/127\.0\.0\.1:\d+)/.exec(line)![1];
      expect((await fetch(`${base}/batches/${batchId}/result.csv`)).status).toBe(401);
      const res = await fetch(`${base}/batches/${batchId}/result.csv`, auth);
      expect(res.status).toBe(200);
      const lines = (await res.text()).trim().split(/\r?\n/);
      expect(lines).toHaveLength(24);
      expect(lines[0]).toMatch(/^\uFEFF?reference,from_account,.*,status,payment_id,/);
      expect(lines.slice(1).every((l) => /,pay_[0-9a-f]+,/.test(l))).toBe(true);
      expect((await fetch(`${base}/batches/b20000101T000000-00000000/result.csv`, auth)).status).toBe(404);
    } finally {
      server.child.kill("SIGTERM");
      expect(await server.exited).toBe(0);
    }

    // Recovering from the archived sheet of a batch that is intact adopts every payment and pays nothing.
    const recovered = await run([
      "recover",
      path.join(dataDir, "archive", `${batchId}.csv`),
      "--redis-prefix",
      prefix,
    ]);
    expect(recovered.code).toBe(0);
    expect(recovered.output.join("\n")).toContain(`recovered batch ${batchId}`);
    expect(await paymentsOfBatch(api, batchId!)).toHaveLength(23);

    const again = await run(["submit", "samples/payouts-valid.csv", "--redis-prefix", prefix]);
    expect(again.code).toBe(1);
    expect(again.output.join("\n")).toContain(`already submitted as batch ${batchId}`);
  }, 180_000); // six CLI processes one after another: on a loaded machine well over the default 30 s

  it("with --on-invalid skip queues the valid rows of a sheet that has mistakes", async () => {
    const r = await run([
      "submit",
      "samples/payouts-mistakes.csv",
      "--on-invalid",
      "skip",
      "--redis-prefix",
      prefix,
    ]);
    expect(r.code).toBe(0);
    const batchId = r.output.find((l) => /^b\d{8}T/.test(l))!;
    const batch = await redis.hgetall(`${prefix}:batch:${batchId}`);
    expect(Number(batch.rowCount)).toBe(3);
    expect(Number(batch.invalidCount)).toBe(24);
  });
});
