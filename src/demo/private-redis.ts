/**
 * A throwaway Redis for the demo when REDIS_URL is not set: `redis-server` from PATH on a free
 * loopback port, in memory only, with the eviction policy BullMQ needs. Stopped with the demo.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { PayoutsError } from "../errors/index.js";

export interface PrivateRedis {
  url: string;
  /** The redis-server's process id (for measuring it). */
  pid: number | undefined;
  stop(): Promise<void>;
}

export class RedisUnavailableError extends PayoutsError {
  override readonly name = "RedisUnavailableError";
  constructor(message: string) {
    super("REDIS_UNAVAILABLE", message, { kind: "unavailable" });
  }
}

const HOW_TO_GET_ONE =
  "install one (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis), " +
  "or run `docker compose up -d redis` and set REDIS_URL=redis://127.0.0.1:6379";

/** A port on 127.0.0.1 that was free a moment ago (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  server.close();
  await once(server, "close");
  return port;
}

export interface PrivateRedisOptions {
  /** The port (default: a free one). */
  port?: number;
  /** More server arguments (the scale-out tests start cluster nodes with `--cluster-enabled yes`). */
  extraArgs?: readonly string[];
}

/**
 * The arguments of a private redis-server on `port`: loopback only, no RDB snapshots, no AOF, and
 * the eviction policy BullMQ needs. A later argument overrides an earlier one, so `extraArgs` may
 * turn the AOF on (`--appendonly yes`) or add settings.
 */
export function redisServerArgs(port: number, extraArgs: readonly string[] = []): string[] {
  return [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--maxmemory-policy",
    "noeviction",
    ...extraArgs,
  ];
}

export async function startPrivateRedis(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  const port = options.port ?? (await freePort());
  const child = spawn(
    "redis-server",
    redisServerArgs(port, [
      // A row's state hash holds its history (a few hundred bytes): with values up to 1 KiB it stays
      // in Redis's compact listpack encoding, about half the memory per row (docs/performance.md).
      "--hash-max-ziplist-value", // the name Redis 6 knows; Redis 7 reads it as hash-max-listpack-value
      "1024",
      ...(options.extraArgs ?? []),
    ]),
    { stdio: "ignore" },
  );
  const spawnError = new Promise<Error>((resolve) => child.once("error", resolve));
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const failed: NodeJS.ErrnoException | undefined = await Promise.race([
      spawnError,
      sleep(100).then(() => undefined),
    ]);
    if (failed) {
      throw new RedisUnavailableError(
        `redis-server could not be started (${startFailure(failed)}); ${HOW_TO_GET_ONE}`,
      );
    }
    if (child.exitCode !== null) {
      throw new RedisUnavailableError(`redis-server exited with code ${child.exitCode}; ${HOW_TO_GET_ONE}`);
    }
    if (await redisAnswers(url)) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new RedisUnavailableError(
        `redis-server did not answer on port ${port} within 10 s; ${HOW_TO_GET_ONE}`,
      );
    }
  }
  return {
    url,
    pid: child.pid,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await Promise.race([exited, sleep(5_000)]);
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}

function startFailure(err: NodeJS.ErrnoException): string {
  return err.code === "ENOENT" ? "it is not on PATH" : (err.code ?? err.message);
}

/** True when a Redis at `url` answers a PING within a couple of seconds (one try, no reconnects). */
export async function redisAnswers(url: string): Promise<boolean> {
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 2_000,
  });
  probe.on("error", () => {}); // not up yet: the failed connect() below says so
  try {
    await probe.connect();
    return (await probe.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

export interface PrivateCluster {
  /** The masters' ports on 127.0.0.1 (REDIS_CLUSTER_NODES is `127.0.0.1:<port>,...`). */
  ports: number[];
  nodes: PrivateRedis[];
  stop(): Promise<void>;
}

/**
 * A throwaway Redis Cluster of `masters` masters and no replicas on loopback (the scale-out test and
 * `bench:e2e --cluster`): `redis-server --cluster-enabled yes` each, joined by `redis-cli --cluster
 * create`, resolved once every node reports `cluster_state:ok`. Node files go to `dir`.
 */
export async function startPrivateCluster(dir: string, masters = 3): Promise<PrivateCluster> {
  const ports: number[] = [];
  const nodes: PrivateRedis[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freeClusterPort(ports);
      ports.push(port);
      const args = ["--cluster-enabled", "yes", "--cluster-config-file", `nodes-${port}.conf`, "--dir", dir];
      nodes.push(await startPrivateRedis({ port, extraArgs: args }));
    }
    const addresses = ports.map((p) => `127.0.0.1:${p}`);
    await run("redis-cli", ["--cluster", "create", ...addresses, "--cluster-replicas", "0", "--cluster-yes"]);
    for (const port of ports) {
      const probe = new Redis({ port, host: "127.0.0.1", lazyConnect: true });
      probe.on("error", () => {});
      try {
        for (let i = 0; !String(await probe.cluster("INFO")).includes("cluster_state:ok"); i++) {
          if (i > 200) throw new RedisUnavailableError(`cluster node ${port} did not reach cluster_state:ok`);
          await sleep(100);
        }
      } finally {
        probe.disconnect();
      }
    }
    return { ports, nodes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A free port whose cluster bus port (port + 10000) is free too. */
async function freeClusterPort(taken: readonly number[]): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port > 55_000 || taken.includes(port)) continue;
    const bus = createServer();
    const busFree = await new Promise<boolean>((resolve) => {
      bus.once("error", () => resolve(false));
      bus.listen(port + 10_000, "127.0.0.1", () => bus.close(() => resolve(true)));
    });
    if (busFree) return port;
  }
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0
        ? resolve()
        : reject(new RedisUnavailableError(`${command} ${args.join(" ")} exited ${code}`)),
    );
  });
}
