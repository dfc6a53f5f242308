/**
 * Shared set-up of the watched-folder tests that run the built CLI as real processes: one sandbox, a
 * client of it and the test Redis for the file; per test a DATA_DIR, a Redis prefix and a `spawn` of
 * `payouts <command>` on them. Everything is stopped and removed when the file ends.
 */
import { rm } from "node:fs/promises";
import path from "node:path";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { createPayoutsClient, type PayoutsClient } from "../../../src/payouts-api/index.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";
import { type CliProcess, spawnCli, stopProcess } from "../pipeline/processes.js";
import { tempDataDir } from "./helpers.js";

export interface ProcessHarness {
  readonly sandbox: RunningSandbox;
  readonly api: PayoutsClient;
  readonly redis: Redis;
  /** A DATA_DIR and prefix of its own, and `spawn(args, env)` of the CLI on them. */
  setup(label: string): Promise<ProcessTest>;
}

export interface ProcessTest {
  dataDir: string;
  prefix: string;
  spawn(args: string[], extraEnv?: Record<string, string>): CliProcess;
  folder(name: string): string;
}

/** Registers the file's beforeAll/afterAll; call at the top of a test file. */
export function useProcessHarness(): ProcessHarness {
  let sandbox: RunningSandbox | undefined;
  let api: PayoutsClient | undefined;
  let redis: Redis | undefined;
  const prefixes: string[] = [];
  const dataDirs: string[] = [];
  const processes: CliProcess[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({ clock: { toInProgressMs: 50, toFinalMs: 50 } });
    api = createPayoutsClient({ entityId: "me", baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    redis = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => stopProcess(p, "SIGKILL")));
    for (const prefix of prefixes) await deleteKeys(redis!, prefix);
    for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
    redis?.disconnect();
    await api?.close();
    await sandbox?.close();
  });

  return {
    get sandbox() {
      return sandbox!;
    },
    get api() {
      return api!;
    },
    get redis() {
      return redis!;
    },
    async setup(label) {
      const dataDir = await tempDataDir(label);
      const prefix = uniquePrefix(label);
      dataDirs.push(dataDir);
      prefixes.push(prefix);
      const env = {
        PAYOUTS_API_URL: sandbox!.url,
        PAYOUTS_API_KEY: sandbox!.apiKey,
        REDIS_URL,
        DATA_DIR: dataDir,
        LOG_LEVEL: "info",
      };
      return {
        dataDir,
        prefix,
        spawn(args, extraEnv = {}) {
          const p = spawnCli([...args, "--redis-prefix", prefix], { ...env, ...extraEnv });
          processes.push(p);
          return p;
        },
        folder: (name) => path.join(dataDir, name),
      };
    },
  };
}
