/**
 * Every process checks the Redis layout at start (src/redis/layout-version.ts): one it does not know
 * is refused in one line that says what to do, and `payouts migrate` stamps or moves a store. Real
 * processes of the built CLI against the shared test Redis, each under its own prefix.
 */
import { afterAll, describe, expect, it } from "vitest";
import { connectRedis, LAYOUT_VERSION } from "../../../src/redis/index.js";
import { deleteKeys, uniquePrefix } from "../pipeline/helpers.js";
import { spawnCli } from "../pipeline/processes.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = connectRedis(REDIS_URL);
const prefixes: string[] = [];

afterAll(async () => {
  for (const prefix of prefixes) await deleteKeys(redis, prefix);
  redis.disconnect();
});

function prefixFor(label: string): string {
  const prefix = uniquePrefix(label);
  prefixes.push(prefix);
  return prefix;
}

async function run(args: string[]) {
  const cli = spawnCli(args, {
    REDIS_URL,
    LOG_LEVEL: "warn",
    PAYOUTS_API_URL: "http://127.0.0.1:9",
    PAYOUTS_API_KEY: "k",
  });
  const code = await cli.exited;
  return { code, output: cli.output };
}

describe("the Redis layout a process reads", () => {
  it("stamps an empty store with this version's layout, and commands run on it", async () => {
    const prefix = prefixFor("layout-new");
    const status = await run(["status", "--redis-prefix", prefix]);
    expect(status.code, status.output.join("\n")).toBe(0);
    expect(await redis.get(`${prefix}:layout`)).toBe(String(LAYOUT_VERSION));
  });

  it("refuses a layout written by a newer version, in one line, before doing anything", async () => {
    const prefix = prefixFor("layout-newer");
    await redis.set(`${prefix}:layout`, "7");
    for (const args of [["status"], ["user", "list"], ["retry", "b_x"]]) {
      const result = await run([...args, "--redis-prefix", prefix]);
      expect(result.code, result.output.join("\n")).toBe(2);
      expect(result.output).toEqual([
        expect.stringMatching(
          new RegExp(
            `layout 7, written by a newer payouts; this version reads layout ${LAYOUT_VERSION}: run the newer version`,
          ),
        ),
      ]);
    }
    const worker = await run(["worker", "--redis-prefix", prefix]);
    expect(worker.code, worker.output.join("\n")).toBe(2);
    expect(worker.output.join("\n")).toMatch(/layout 7, written by a newer payouts/);
    expect(await redis.get(`${prefix}:layout`)).toBe("7");
  });

  it("refuses an older layout and names `payouts migrate`, which cannot move it without its step", async () => {
    const prefix = prefixFor("layout-older");
    await redis.set(`${prefix}:layout`, "0");
    const status = await run(["status", "--redis-prefix", prefix]);
    expect(status.code).toBe(2);
    expect(status.output.join("\n")).toMatch(
      /not a layout version|stop every payouts process, then run `payouts migrate`/,
    );
  });

  it("migrate on a store in this layout changes nothing and says so", async () => {
    const prefix = prefixFor("layout-migrate");
    const first = await run(["migrate", "--redis-prefix", prefix]);
    expect(first.code, first.output.join("\n")).toBe(0);
    expect(first.output.at(-1)).toMatch(new RegExp(`already in layout ${LAYOUT_VERSION}`));
    expect(await redis.get(`${prefix}:layout`)).toBe(String(LAYOUT_VERSION));
  });

  it("migrate moves a layout-1 store on: the old duplicate index is deleted, and rebuilt at the next use", async () => {
    const prefix = prefixFor("layout-1-to-2");
    await redis.set(`${prefix}:layout`, "1");
    await redis.zadd(`${prefix}:dup:p:0123456789abcdef01234567`, Date.now(), '["b_1",2,"R-1","R-1"]');
    await redis.set(`${prefix}:dup:built`, new Date().toISOString());
    await redis.set(`${prefix}:batches:keep`, "1");
    const refused = await run(["status", "--redis-prefix", prefix]);
    expect(refused.code).toBe(2);
    const migrated = await run(["migrate", "--redis-prefix", prefix]);
    expect(migrated.code, migrated.output.join("\n")).toBe(0);
    expect(migrated.output.join("\n")).toMatch(/layout 1 -> 2: the duplicate index moves/);
    expect(await redis.get(`${prefix}:layout`)).toBe("2");
    expect(await redis.keys(`${prefix}:dup:*`)).toEqual([]);
    expect(await redis.get(`${prefix}:batches:keep`)).toBe("1");
    const status = await run(["status", "--redis-prefix", prefix]);
    expect(status.code, status.output.join("\n")).toBe(0);
  });
});
