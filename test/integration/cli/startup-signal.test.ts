/**
 * A SIGTERM that arrives while `payouts worker` is still starting stops it in order, as one that arrives
 * later does: it used to kill the process by the default action, half up. The worker's Redis is reached
 * through a proxy that holds the first connection back, so the signal lands inside start-up every time.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer, type Server, type Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli } from "../pipeline/processes.js";

const REDIS = new URL(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");

/** A TCP proxy to Redis that accepts connections at once but forwards nothing until `release()`. */
function heldRedisProxy(): Promise<{
  url: string;
  firstConnection: Promise<void>;
  release(): void;
  close(): Promise<void>;
}> {
  let released = false;
  const held: Array<() => void> = [];
  const sockets = new Set<Socket>();
  let seen!: () => void;
  const firstConnection = new Promise<void>((resolve) => {
    seen = resolve;
  });
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.pause();
    seen();
    const forward = () => {
      const upstream = connect({ host: REDIS.hostname, port: Number(REDIS.port || 6379) });
      sockets.add(upstream);
      client.pipe(upstream).pipe(client);
      client.resume();
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
    };
    if (released) forward();
    else held.push(forward);
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `redis://127.0.0.1:${port}${REDIS.pathname}`,
        firstConnection,
        release() {
          released = true;
          for (const forward of held.splice(0)) forward();
        },
        close: () =>
          new Promise((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

let sandbox: RunningSandbox;
let dataDir: string;
beforeAll(async () => {
  sandbox = await startSandbox();
  dataDir = await mkdtemp(path.join(os.tmpdir(), "payouts-startup-signal-"));
});
afterAll(async () => {
  await sandbox.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("a signal during start-up", () => {
  it("`payouts worker` finishes starting, then stops in order and exits 0", async () => {
    const proxy = await heldRedisProxy();
    try {
      const worker = spawnCli(["worker", "--redis-prefix", `startup-signal-${process.pid}`], {
        REDIS_URL: proxy.url,
        PAYOUTS_API_URL: sandbox.url,
        PAYOUTS_API_KEY: sandbox.apiKey,
        DATA_DIR: dataDir,
        LOG_LEVEL: "info",
      });
      try {
        // The worker is inside start-up: it has opened its first Redis connection and waits on it.
        await proxy.firstConnection;
        worker.child.kill("SIGTERM");
        proxy.release();
        const exit = await worker.exited;
        const output = worker.output.join("\n");
        expect(exit, output).toBe(0);
        expect(output).toContain("payment worker ready");
        expect(output).toContain("payment worker stopped");
      } finally {
        if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
      }
    } finally {
      await proxy.close();
    }
  }, 60_000);
});
