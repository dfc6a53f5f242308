/**
 * `payouts demo` stops in order on SIGINT and SIGTERM, as a real process: the
 * wait ends, its workers, server and sandbox stop, and the private redis-server it started is gone.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli } from "../pipeline/processes.js";

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), "payouts-demo-signal-"));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** True when something accepts a TCP connection on the URL's port. */
function listening(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

describe("payouts demo on a signal", () => {
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    it(`stops everything it started on ${signal}, its redis-server included, and exits ${code}`, async () => {
      const demo = spawnCli(["demo"], { DATA_DIR: dataDir, LOG_LEVEL: "warn", REDIS_URL: "" });
      const sandboxUrl = /started at (http\S+)/.exec(await demo.waitFor(/SANDBOX started at/, 30_000))![1]!;
      const redisUrl = /(redis:\/\/\S+)/.exec(await demo.waitFor(/private redis-server at/, 30_000))![1]!;
      await demo.waitFor(/^submitted /, 60_000);
      expect(await listening(redisUrl)).toBe(true);
      demo.child.kill(signal);
      const exit = await demo.exited;
      const output = demo.output.join("\n");
      expect(exit, output).toBe(code);
      expect(output).toContain(`${signal}: stopping the demo`);
      expect(await listening(redisUrl)).toBe(false);
      expect(await listening(sandboxUrl)).toBe(false);
    });
  }
});
