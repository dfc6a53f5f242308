/**
 * A command that loses Redis (or never reaches it, or cannot reach the Payouts
 * Service) ends with exit 2 and one clear line: no ioredis "Unhandled error event", no stack trace;
 * and `payouts submit` never reports a batch id that Redis did not keep. Real `payouts submit`
 * processes of the built CLI, a private redis-server killed and restarted under them, the sandbox.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeAchSheet } from "../../support/sheets.js";
import { spawnCli } from "../pipeline/processes.js";
import { freePort, type RestartableRedis, startRestartableRedis } from "../restartable-redis.js";

const ROWS = 5_000;
const prefix = "loss";
let sandbox: RunningSandbox;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandbox();
  dir = await mkdtemp(path.join(os.tmpdir(), "payouts-redis-loss-"));
});

afterAll(async () => {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

/** A private redis-server (see restartable-redis.ts) and a DATA_DIR of its own. */
async function privateRedis(persistence: "aof" | "none") {
  const redis = await startRestartableRedis({ dir: await mkdtemp(path.join(dir, "redis-")), persistence });
  return { redis, dataDir: await mkdtemp(path.join(dir, "data-")) };
}

/** A valid sheet of `rows` rows (the sandbox's sample accounts), distinct per `label`. */
function sheet(label: string, rows: number): Promise<string> {
  return writeAchSheet(dir, label, rows);
}

function envFor(redisUrl: string, dataDir: string, apiUrl = sandbox.url): Record<string, string> {
  return {
    PAYOUTS_API_URL: apiUrl,
    PAYOUTS_API_KEY: sandbox.apiKey,
    REDIS_URL: redisUrl,
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
  };
}

async function run(args: string[], env: Record<string, string>) {
  const p = spawnCli(args, env);
  const code = await p.exited;
  return { code, output: p.output };
}

/** Exactly one line, starting `payouts:`, with no stack frames nor ioredis noise. */
function expectOneClearLine(output: string[], mentions: RegExp): void {
  expect(output, output.join("\n")).toHaveLength(1);
  expect(output[0]).toMatch(/^payouts: /);
  expect(output[0]).toMatch(mentions);
  expect(output[0]).not.toMatch(/ioredis|Unhandled|\n\s+at /);
}

/**
 * Runs `payouts submit` of a 5,000-row sheet and takes Redis away as soon as the first chunk of rows
 * is recorded (mid-way through recording and enqueueing), then brings it back.
 */
async function submitLosingRedis(
  redis: RestartableRedis,
  file: string,
  dataDir: string,
  signal: "SIGTERM" | "SIGKILL",
): Promise<{ code: number | string; output: string[]; batchId: string | undefined; cut: boolean }> {
  const submit = spawnCli(["submit", file, "--redis-prefix", prefix], envFor(redis.url, dataDir));
  const probe = new Redis(redis.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on("error", () => undefined);
  let batchId: string | undefined;
  let cut = false;
  let exited = false;
  void submit.exited.then(() => {
    exited = true;
  });
  try {
    // Validation of 5,000 rows comes first; the batch is recorded after it. Wait on that, generously.
    const deadline = Date.now() + 120_000;
    while (!exited && Date.now() < deadline) {
      batchId ??= (await probe.zrange(`${prefix}:batches`, 0, 0))[0];
      if (batchId && (await probe.llen(`${prefix}:batch:${batchId}:order`)) > 0) {
        cut = true;
        break;
      }
      await sleep(2);
    }
  } finally {
    probe.disconnect();
  }
  if (cut) await redis.restart(signal);
  const code = await submit.exited;
  return { code, output: submit.output, batchId, cut };
}

/** The lines a failure printed (the validation summary before them is fine), or stack and ioredis noise. */
function failureLines(output: string[]): string[] {
  // A JSON log record is the log (its `err` carries the stack by design), not a trace the command printed.
  return output.filter(
    (l) => l.startsWith("payouts:") || (!l.startsWith('{"level":') && /ioredis|^\s+at /.test(l)),
  );
}

function expectCutInOneLine(r: { code: number | string; output: string[]; cut: boolean }): void {
  expect(r.cut, `submit ended before the rows were recorded: ${r.output.join("\n")}`).toBe(true);
  expect(r.code).toBe(2);
  expectOneClearLine(failureLines(r.output), /Redis/);
}

describe("a command that loses Redis mid-way", () => {
  it("submit: Redis killed while 5,000 rows are recorded and comes back empty: exit 2, one line, no batch id; the same file again points to `payouts recover`", async () => {
    const { redis, dataDir } = await privateRedis("none");
    try {
      const file = await sheet("lost", ROWS);
      const r = await submitLosingRedis(redis, file, dataDir, "SIGKILL");
      expectCutInOneLine(r);
      expect(r.output).not.toContain(r.batchId); // no batch id is reported as submitted

      // The batch is not in Redis; `status` says so (and does not crash).
      const status = await run(["status", r.batchId!, "--redis-prefix", prefix], envFor(redis.url, dataDir));
      expect(status.code).not.toBe(0);
      expect(status.output.join("\n")).toMatch(/no batch/i);

      // The archive on disk remembers the file: submitting it again is refused with the way out.
      const again = await run(["submit", file, "--redis-prefix", prefix], envFor(redis.url, dataDir));
      expect(again.code).toBe(1);
      expect(again.output.join("\n")).toContain(`payouts recover ${r.batchId}`);
    } finally {
      await redis.stop("SIGKILL");
    }
  }, 300_000);

  it("submit: Redis shut down mid-way and back with its data (AOF): exit 2, one line; the same file again finishes that batch, all 5,000 rows", async () => {
    const { redis, dataDir } = await privateRedis("aof");
    try {
      const file = await sheet("kept", ROWS);
      const r = await submitLosingRedis(redis, file, dataDir, "SIGTERM");
      expectCutInOneLine(r);

      const again = await run(["submit", file, "--redis-prefix", prefix], envFor(redis.url, dataDir));
      expect(again.code, again.output.join("\n")).toBe(0);
      expect(again.output.join("\n")).toContain(
        `finished the interrupted submission of this file (batch ${r.batchId})`,
      );
      expect(again.output).toContain(r.batchId);
      const status = await run(["status", r.batchId!, "--redis-prefix", prefix], envFor(redis.url, dataDir));
      expect(status.code).toBe(0);
      expect(status.output.join("\n")).toContain(String(ROWS));
    } finally {
      await redis.stop("SIGKILL");
    }
  }, 300_000);
});

describe("a command whose Redis or Payouts Service cannot be reached", () => {
  let nowhere: string;
  beforeAll(async () => {
    nowhere = `redis://127.0.0.1:${await freePort()}`;
  });

  it("status with no Redis: exit 2, one line", async () => {
    const r = await run(["status", "--redis-prefix", prefix], envFor(nowhere, dir));
    expect(r.code).toBe(2);
    expectOneClearLine(r.output, /Redis/);
  });

  it("submit with no Redis: exit 2, one line after the validation summary", async () => {
    const file = await sheet("no-redis", 3);
    const r = await run(["submit", file, "--redis-prefix", prefix], envFor(nowhere, dir));
    expect(r.code).toBe(2);
    expectOneClearLine(failureLines(r.output), /Redis/);
  });

  it("submit with no Payouts Service: exit 2, one line", async () => {
    const file = await sheet("no-api", 3);
    const r = await run(
      ["submit", file, "--redis-prefix", prefix],
      envFor(nowhere, dir, `http://127.0.0.1:${await freePort()}`),
    );
    expect(r.code).toBe(2);
    expectOneClearLine(r.output, /cannot reach the Partner Payouts Service/);
  });
});

describe("long-running processes while Redis restarts", () => {
  it("serve and worker ride it out: no ioredis traces, and the server is healthy again once Redis is back", async () => {
    const { redis, dataDir } = await privateRedis("none");
    const env = { ...envFor(redis.url, dataDir), LOG_LEVEL: "info" }; // "payment worker ready" is info
    const server = spawnCli(["serve", "--port", "0", "--redis-prefix", prefix], env);
    const worker = spawnCli(["worker", "--redis-prefix", prefix], env);
    try {
      const line = await server.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/, 120_000);
      const base = /(http:\/\/127\.0\.0\.1:\d+)/.exec(line)![1];
      await worker.waitFor(/payment worker ready/, 120_000);
      await redis.stop("SIGKILL");
      await sleep(3_000); // several reconnection attempts while it is away
      await redis.start();
      const deadline = Date.now() + 120_000;
      let status = 0;
      while (Date.now() < deadline) {
        status = (await fetch(`${base}/healthz`).catch(() => undefined))?.status ?? 0;
        if (status === 200) break;
        await sleep(500);
      }
      expect(status).toBe(200);
      for (const p of [server, worker])
        expect(p.output.filter((l) => /Unhandled error event|^\s+at /.test(l))).toEqual([]);
    } finally {
      server.child.kill("SIGTERM");
      worker.child.kill("SIGTERM");
      await Promise.all([server.exited, worker.exited]);
      await redis.stop("SIGKILL");
    }
  }, 300_000);
});
