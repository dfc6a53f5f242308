/**
 * Every command ends with one line and exit 2 when its environment fails it (README "Commands"): Redis
 * unreachable, lost mid-way, frozen or out of memory; the disk full; its output closed; the service
 * unreachable. And it stops on SIGTERM within its grace even when what it waits on hangs. Real
 * processes of the built CLI against real redis-servers (private ones, never the shared test Redis
 * for a failure), the sandbox, and a real full disk (a small tmpfs).
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { redisAnswers, startPrivateRedis } from "../../../src/demo/private-redis.js";
import { trackChild } from "../../support/child-processes.js";
import { writeAchSheet } from "../../support/sheets.js";
import { mountSmallDisk } from "../../support/tmpfs.js";
import { uniquePrefix } from "../pipeline/helpers.js";
import { BIN, type CliProcess, spawnCli } from "../pipeline/processes.js";
import { freePort, startRestartableRedis } from "../restartable-redis.js";

const SHARED_REDIS = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
let sandbox: RunningSandbox;
let dir: string;
let nowhere: string;

beforeAll(async () => {
  sandbox = await startSandbox();
  dir = await mkdtemp(path.join(os.tmpdir(), "payouts-env-failures-"));
  nowhere = `redis://127.0.0.1:${await freePort()}`;
});

afterAll(async () => {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

function envFor(redisUrl: string, dataDir = dir): Record<string, string> {
  return {
    PAYOUTS_API_URL: sandbox.url,
    PAYOUTS_API_KEY: sandbox.apiKey,
    REDIS_URL: redisUrl,
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
  };
}

/** A valid sheet of `rows` rows (the sandbox's sample accounts), distinct per `label`. */
function sheet(label: string, rows: number): Promise<string> {
  return writeAchSheet(dir, label, rows);
}

/**
 * A private redis-server the test will freeze (SIGSTOP); thawed and stopped when the test ends, even
 * when it fails or times out.
 */
async function frozenLater() {
  const redis = await startPrivateRedis();
  onTestFinished(async () => {
    process.kill(redis.pid!, "SIGCONT");
    await redis.stop();
  });
  return redis;
}

/** The `payouts:` lines a command printed (logs and the validation summary may come before). */
function failureLines(p: CliProcess): string[] {
  // A JSON log record is the log (its `err` carries the stack by design), not a trace the command printed.
  return p.output.filter(
    (l) => l.startsWith("payouts:") || (!l.startsWith('{"level":') && /^\s+at |Unhandled|ioredis/.test(l)),
  );
}

/** Exactly one line starting `payouts:`, saying `mentions`, with no stack frames around it. */
function expectOneLine(p: CliProcess, mentions: RegExp): void {
  const lines = failureLines(p);
  expect(lines, p.output.join("\n")).toHaveLength(1);
  expect(lines[0]).toMatch(mentions);
  expect(p.output.join("\n")).not.toMatch(/\n\s+at |unexpected error/);
}

describe("Redis unreachable", () => {
  it("demo with a REDIS_URL where nothing listens: exit 2 at once, one line", async () => {
    const demo = spawnCli(["demo"], { ...envFor(nowhere), PAYOUTS_API_URL: "", PAYOUTS_API_KEY: "" });
    expect(await demo.exited, demo.output.join("\n")).toBe(2);
    expectOneLine(demo, /cannot reach Redis at REDIS_URL=redis:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
    expect(demo.output.join("\n")).not.toContain("SANDBOX started"); // nothing was started
  });

  it("worker, serve and watch: exit 2 after a short wait for it, one line each", async () => {
    const processes = [
      spawnCli(["worker"], envFor(nowhere)),
      spawnCli(["serve", "--port", "0"], envFor(nowhere)),
      spawnCli(["watch"], envFor(nowhere)),
    ];
    for (const p of processes) {
      expect(await p.exited, p.output.join("\n")).toBe(2);
      expectOneLine(p, /cannot reach Redis at REDIS_URL=.* \(ECONNREFUSED\)/);
    }
  }, 60_000);

  it("result: exit 2, one line", async () => {
    const result = spawnCli(["result", "b20260101T000000-00000000"], envFor(nowhere));
    expect(await result.exited).toBe(2);
    expectOneLine(result, /cannot reach Redis/);
  });
});

describe("Redis lost, frozen or full", () => {
  it("demo whose Redis goes away after the sheet is submitted: exit 2, one line", async () => {
    const redis = await startRestartableRedis({
      dir: await mkdtemp(path.join(dir, "r-")),
      persistence: "none",
    });
    try {
      const demo = spawnCli(["demo"], {
        REDIS_URL: redis.url,
        DATA_DIR: await mkdtemp(path.join(dir, "d-")),
        LOG_LEVEL: "error",
      });
      await demo.waitFor(/^submitted /, 60_000);
      await redis.stop("SIGKILL");
      expect(await demo.exited, demo.output.join("\n")).toBe(2);
      expectOneLine(demo, /Redis at REDIS_URL is unreachable or went away mid-way/);
    } finally {
      await redis.stop("SIGKILL");
    }
  }, 120_000);

  it("demo on SIGTERM while its Redis hangs (a frozen server): ends within its grace, saying so", async () => {
    const redis = await frozenLater();
    const demo = spawnCli(["demo"], {
      REDIS_URL: redis.url,
      DATA_DIR: await mkdtemp(path.join(dir, "d-")),
      LOG_LEVEL: "error",
    });
    await demo.waitFor(/^submitted /, 60_000);
    process.kill(redis.pid!, "SIGSTOP");
    demo.child.kill("SIGTERM");
    expect(await demo.exited, demo.output.join("\n")).toBe(143);
    expect(demo.output.join("\n")).toContain("SIGTERM: stopping the demo");
    expect(failureLines(demo).every((l) => !/^\s+at /.test(l))).toBe(true);
  }, 120_000);

  it("worker on SIGTERM while its Redis hangs: ends within its grace", async () => {
    const redis = await frozenLater();
    const worker = spawnCli(["worker", "--shutdown-grace-ms", "2000"], {
      ...envFor(redis.url),
      LOG_LEVEL: "info",
    });
    await worker.waitFor(/payment worker ready/, 60_000);
    process.kill(redis.pid!, "SIGSTOP");
    worker.child.kill("SIGTERM");
    const code = await worker.exited;
    // Either it closed everything in time (0) or the backstop ended it (143), never a hang.
    expect([0, 143], worker.output.join("\n")).toContain(code);
    expect(failureLines(worker).length).toBeLessThanOrEqual(1);
  }, 90_000);

  it("submit into a Redis at its maxmemory: exit 2, one line that says out of memory", async () => {
    const redis = await startPrivateRedis({ extraArgs: ["--maxmemory", "3mb"] });
    onTestFinished(() => redis.stop());
    const submit = spawnCli(
      ["submit", await sheet("oom", 3_000), "--redis-prefix", "oom"],
      envFor(redis.url, await mkdtemp(path.join(dir, "d-"))),
    );
    expect(await submit.exited, submit.output.join("\n")).toBe(2);
    expectOneLine(submit, /Redis at REDIS_URL is out of memory \(its maxmemory is reached\)/);
  }, 120_000);
});

const disk = await mountSmallDisk(512);
const noDisk = "unavailable" in disk ? disk.unavailable : undefined;

describe("disk full", () => {
  afterAll(async () => {
    if (!("unavailable" in disk)) await disk.remove();
  });

  it.skipIf(noDisk !== undefined)(
    `submit with DATA_DIR on a full disk: exit 2, one line naming the file, nothing half-written left; with room again it submits${noDisk ? ` (skipped: ${noDisk})` : ""}`,
    async () => {
      if ("unavailable" in disk) return;
      const dataDir = path.join(disk.dir, "data");
      const file = await sheet("full", 20);
      const prefix = uniquePrefix("full");
      await disk.fill();
      const submit = spawnCli(["submit", file, "--redis-prefix", prefix], envFor(SHARED_REDIS, dataDir));
      expect(await submit.exited, submit.output.join("\n")).toBe(2);
      expectOneLine(submit, /cannot write .*data\/archive\/\S+: no space left on the device \(ENOSPC\)/);
      expect(await filesUnder(dataDir)).toEqual([]);
      await disk.free();
      const again = spawnCli(["submit", file, "--redis-prefix", prefix], envFor(SHARED_REDIS, dataDir));
      expect(await again.exited, again.output.join("\n")).toBe(0);
    },
    120_000,
  );
});

describe("output closed, service unreachable", () => {
  it("status whose standard output is closed by its reader (EPIPE): exit 2, one line on stderr", async () => {
    const child = trackChild(
      spawn(process.execPath, [BIN, "status", "--redis-prefix", uniquePrefix("epipe")], {
        env: { ...process.env, REDIS_URL: SHARED_REDIS },
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
    child.stdout.destroy(); // the reader is gone before the first line, as `| head -0` would be
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(code, stderr).toBe(2);
    const lines = stderr.trim().split("\n");
    expect(lines, stderr).toEqual([
      "payouts: standard output was closed before everything was written: its reader closed it (EPIPE)",
    ]);
  });

  it("demo with a PAYOUTS_API_URL where nothing listens: exit 2, one line, its private Redis stopped", async () => {
    const demo = spawnCli(["demo"], {
      REDIS_URL: "",
      PAYOUTS_API_URL: `http://127.0.0.1:${await freePort()}/v2`,
      PAYOUTS_API_KEY: "sk_anything",
      DATA_DIR: await mkdtemp(path.join(dir, "d-")),
      LOG_LEVEL: "warn",
    });
    expect(await demo.exited, demo.output.join("\n")).toBe(2);
    expectOneLine(demo, /cannot reach the Partner Payouts Service at PAYOUTS_API_URL/);
    const redisUrl = /private redis-server at (redis:\/\/\S+)/.exec(demo.output.join("\n"))?.[1];
    expect(redisUrl).toBeDefined();
    expect(await redisAnswers(redisUrl!)).toBe(false);
  }, 90_000);
});

/** Files (not folders) left under `root`, relative. */
async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}
