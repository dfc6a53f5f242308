/**
 * A private redis-server for tests that take Redis away from running processes: killed, shut down,
 * restarted on the same port, with or without persistence. Never the shared test Redis (REDIS_URL).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { freePort, redisServerArgs } from "../../src/demo/private-redis.js";
import { trackChild } from "../support/child-processes.js";

export interface RestartableRedis {
  url: string;
  port: number;
  /** How many times it was started again. */
  restarts: number;
  /**
   * Stops the server: SIGTERM is a clean shutdown (an AOF keeps everything), SIGKILL loses what was
   * not on disk; without persistence both come back empty.
   */
  stop(signal?: "SIGTERM" | "SIGKILL"): Promise<void>;
  /** Starts it again on the same port and data folder; resolves once it answers. */
  start(): Promise<void>;
  /** stop + start. */
  restart(signal?: "SIGTERM" | "SIGKILL"): Promise<void>;
}

export { freePort };

/**
 * @param dir the data folder (the AOF lives there)
 * @param persistence "aof": appendonly with fsync on every write, as production would run it;
 *   "none": in memory only, so a restart comes back empty
 */
export async function startRestartableRedis(options: {
  dir: string;
  persistence: "aof" | "none";
}): Promise<RestartableRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const args = redisServerArgs(port, [
    "--appendonly",
    options.persistence === "aof" ? "yes" : "no",
    "--appendfsync",
    "always",
    "--dir",
    options.dir,
  ]);
  let child: ChildProcess | undefined;
  const redis: RestartableRedis = {
    url,
    port,
    restarts: 0,
    async stop(signal = "SIGTERM") {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((r) => running.once("exit", r));
      running.kill(signal);
      await exited;
    },
    async start() {
      if (child) return;
      child = trackChild(spawn("redis-server", args, { stdio: "ignore" }));
      await untilAnswers(url);
    },
    async restart(signal = "SIGTERM") {
      await redis.stop(signal);
      await redis.start();
      redis.restarts++;
    },
  };
  await redis.start();
  return redis;
}

async function untilAnswers(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on("error", () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return;
    } catch {
      probe.disconnect();
      await sleep(100);
    }
  }
  throw new Error(`the private redis-server at ${url} did not start`);
}
