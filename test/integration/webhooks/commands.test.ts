/**
 * `payouts webhook setup|show` and `payouts serve` as a user runs them: the built binary in a child
 * process, against a sandbox and a real Redis.
 */
import { execFile, spawn } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectRedis } from "../../../src/pipeline/index.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";

const run = promisify(execFile);
const BIN = path.resolve("bin/payouts.js");
let sandbox: RunningSandbox;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  sandbox = await startSandbox();
  env = {
    ...process.env,
    PAYOUTS_API_URL: sandbox.url,
    PAYOUTS_API_KEY: sandbox.apiKey,
    REDIS_URL,
    LOG_LEVEL: "silent",
  };
});
afterAll(async () => {
  await sandbox.close();
});

describe("payouts webhook", () => {
  it("setup subscribes the endpoint to the events we consume; show prints it", async () => {
    const url = "https://payouts.example.com/webhooks/payouts";
    const { stdout } = await run(process.execPath, [BIN, "webhook", "setup", "--url", url], { env });
    expect(stdout).toContain(url);
    expect(sandbox.state.webhook).toMatchObject({ url, isActive: true });
    expect([...(sandbox.state.webhook?.events ?? [])].sort()).toEqual(
      [
        "api.account.created",
        "api.account.deleted",
        "api.account.updated",
        "api.limitation.updated",
        "api.payment.updated",
      ].sort(),
    );
    const shown = await run(process.execPath, [BIN, "webhook", "show"], { env });
    expect(shown.stdout).toContain(url);
    expect(shown.stdout).toContain("api.payment.updated");
    expect(shown.stdout).not.toContain(sandbox.apiKey);
  }, 120_000); // several CLI processes in a row: ~30 s at load 13 on our shared 2 cores

  it("expands --events api.account.* and refuses a plain-http public URL with exit code 2", async () => {
    await run(
      process.execPath,
      [
        BIN,
        "webhook",
        "setup",
        "--url",
        "https://h.example.com/w",
        "--events",
        "api.payment.updated,api.account.*",
      ],
      { env },
    );
    expect([...(sandbox.state.webhook?.events ?? [])].sort()).toEqual([
      "api.account.created",
      "api.account.deleted",
      "api.account.updated",
      "api.payment.updated",
    ]);
    const err = await run(process.execPath, [BIN, "webhook", "setup", "--url", "http://h.example.com/w"], {
      env,
    }).catch((e: unknown) => e);
    expect((err as { code: number }).code).toBe(2);
    expect(sandbox.state.webhook?.url).toBe("https://h.example.com/w");
  }, 120_000); // several CLI processes in a row: ~30 s at load 13 on our shared 2 cores
});

describe("payouts serve", () => {
  it("listens on the requested port, answers /healthz, and exits 0 on SIGTERM", async () => {
    const prefix = uniquePrefix("serve");
    const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--redis-prefix", prefix], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString("utf8");
          const found = /listening on (http:\/\/\S+)/.exec(out)?.[1];
          if (found) resolve(found);
        });
        child.once("exit", (code) => reject(new Error(`serve exited early (${code})`)));
      });
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      const redis = connectRedis(REDIS_URL);
      await deleteKeys(redis, prefix);
      await redis.quit();
    }
  });
});
