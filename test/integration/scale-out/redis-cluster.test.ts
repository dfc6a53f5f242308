/**
 * Redis Cluster: a real 3-master cluster started here on loopback ports
 * (`redis-server --cluster-enabled yes`, `redis-cli --cluster create`), and `payouts serve`,
 * `payouts webhook setup`, `payouts worker` and `payouts submit` as real processes pointed at it with
 * REDIS_CLUSTER_NODES. Every row is paid once, reconciled by webhook, the final result file is written,
 * and every key the tool wrote lives on one node in one slot (the `{payouts}` hash tag).
 *
 * Skipped, with a note, only when redis-server or redis-cli is not installed.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { Cluster, Redis } from "ioredis";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeE2eSheet } from "../../../bench/lib/write-bench-sheets.js";
import { BatchStore } from "../../../src/batches/index.js";
import { type PrivateCluster, startPrivateCluster } from "../../../src/demo/private-redis.js";
import { createPayoutsClient, type PayoutsClient } from "../../../src/payouts-api/index.js";
import { paymentsOfBatch } from "../pipeline/helpers.js";
import { type CliProcess, spawnCli, stopProcess } from "../pipeline/processes.js";

const ROWS = 40;

function installed(command: string): boolean {
  try {
    execFileSync(command, ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
const HAVE_REDIS = installed("redis-server") && installed("redis-cli");
if (!HAVE_REDIS) {
  process.stderr.write("redis-cluster.test: skipped, redis-server or redis-cli is not installed\n");
}

let dir: string;
let sandbox: RunningSandbox;
let api: PayoutsClient;
let cluster: Cluster;
const ports: number[] = [];
let redisCluster: PrivateCluster | undefined;
const processes: CliProcess[] = [];

beforeAll(async () => {
  if (!HAVE_REDIS) return;
  dir = await mkdtemp(path.join(os.tmpdir(), "payouts-cluster-"));
  redisCluster = await startPrivateCluster(dir);
  ports.push(...redisCluster.ports);
  cluster = new Cluster(ports.map((port) => ({ host: "127.0.0.1", port })));
  sandbox = await startSandbox({ clock: { toInProgressMs: 100, toFinalMs: 100 } });
  api = createPayoutsClient({ entityId: "me", baseUrl: sandbox.url, apiKey: sandbox.apiKey });
}, 60_000);

afterAll(async () => {
  if (!HAVE_REDIS) return;
  await Promise.all(processes.map((p) => stopProcess(p, "SIGKILL")));
  cluster?.disconnect();
  await api?.close();
  await sandbox?.close();
  await redisCluster?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!HAVE_REDIS)("the tool on a 3-master Redis Cluster", () => {
  it("pays every row once, reconciles it, writes the result file, and keeps every key in one slot", async () => {
    const dataDir = path.join(dir, "data");
    const env = {
      REDIS_URL: "redis://127.0.0.1:1", // ignored for the address when REDIS_CLUSTER_NODES is set
      REDIS_CLUSTER_NODES: ports.map((p) => `127.0.0.1:${p}`).join(","),
      PAYOUTS_API_URL: sandbox.url,
      PAYOUTS_API_KEY: sandbox.apiKey,
      DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      PAYOUTS_RATE_LIMIT_PER_SECOND: "100000",
    };
    const start = (args: string[]) => {
      const p = spawnCli(args, env);
      processes.push(p);
      return p;
    };
    const serve = start(["serve", "--port", "0"]);
    const serveUrl = /listening on (http\S+)/.exec(await serve.waitFor(/listening on http/, 60_000))?.[1];
    const setup = start(["webhook", "setup", "--url", `${serveUrl}/webhooks/payouts`]);
    expect(await setup.exited).toBe(0);
    const worker = start(["worker", "--concurrency", "8"]);
    await worker.waitFor(/payment worker ready/, 60_000);

    const sheet = path.join(dir, "cluster.csv");
    await writeE2eSheet(sheet, ROWS);
    const submit = start(["submit", sheet]);
    expect(await submit.exited).toBe(0);
    const batchId = submit.output.map((l) => /\b(b\d{8}T\d{6}-[0-9a-f]{8})\b/.exec(l)?.[1]).find(Boolean);
    expect(batchId).toBeDefined();

    // The store read straight from the cluster, under the hash-tagged prefix the commands used.
    const store = new BatchStore(cluster, { prefix: "{payouts}" });
    const deadline = Date.now() + 90_000;
    for (;;) {
      const progress = await store.progress(batchId!);
      if (progress?.counts.completed === ROWS && progress.batch.finishedAt) break;
      if (Date.now() > deadline) throw new Error(`batch not finished: ${JSON.stringify(progress?.counts)}`);
      await sleep(200);
    }
    const payments = await paymentsOfBatch(api, batchId!);
    expect(payments).toHaveLength(ROWS);
    expect(new Set(payments.map((p) => p.metadata?.payouts_row)).size).toBe(ROWS);
    expect(sandbox.stats().idempotency.keysReusedWithDifferentRequest).toBe(0);

    // The final result file, written when the batch finished, shows every row completed.
    const file = await (async () => {
      for (let i = 0; i < 100; i++) {
        const found = (await readdir(path.join(dataDir, "outbox")).catch(() => [])).find(
          (f) => f.includes(batchId!) && f.endsWith(".csv"),
        );
        if (found) {
          const text = (await readFile(path.join(dataDir, "outbox", found), "utf8")).replace(/^\uFEFF/, "");
          const rows = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true }).data;
          if (rows.length === ROWS && rows.every((r) => r.status === "completed" && r.payment_id))
            return rows;
        }
        await sleep(200);
      }
      return undefined;
    })();
    if (!file) {
      const listing = await readdir(path.join(dataDir, "outbox")).catch((e: Error) => e.message);
      throw new Error(
        `no final result file: ${JSON.stringify(listing)}\n${worker.output.slice(-15).join("\n")}`,
      );
    }
    expect(new Set(file.map((r) => r.payment_id)).size).toBe(ROWS);

    expect(await stopProcess(worker)).toBe(0);
    expect(await stopProcess(serve)).toBe(0);

    // Every key the tool wrote (ours and BullMQ's) is on one master, in the slot of `{payouts}`.
    const slot = Number(await cluster.cluster("KEYSLOT", "{payouts}"));
    const keysByNode: number[] = [];
    const slots = new Set<number>();
    for (const port of ports) {
      const node = new Redis({ port, host: "127.0.0.1" });
      const keys = await node.keys("*");
      keysByNode.push(keys.length);
      for (const key of keys) slots.add(Number(await node.cluster("KEYSLOT", key)));
      node.disconnect();
    }
    expect(keysByNode.filter((n) => n > 0)).toHaveLength(1);
    expect([...slots]).toEqual([slot]);
  }, 180_000);
});
