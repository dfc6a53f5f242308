import RedisMock from "ioredis-mock";
import { describe, expect, it } from "vitest";
import {
  LAYOUT_VERSION,
  type LayoutMigration,
  LayoutVersionError,
  layoutProblem,
  migrateLayout,
  type RedisClient,
} from "../../../src/redis/index.js";

describe("layoutProblem", () => {
  it("lets the current layout run", () => {
    expect(layoutProblem(3, "p", 3)).toBeUndefined();
  });
  it("sends an older store to `payouts migrate` and a newer one to the newer version", () => {
    expect(layoutProblem(2, "p", 3)).toMatch(/layout 2; this version reads layout 3: .*payouts migrate/);
    expect(layoutProblem(4, "p", 3)).toMatch(/layout 4, written by a newer payouts; .*run the newer version/);
  });
});

describe("migrateLayout", () => {
  const steps = (log: string[]): LayoutMigration[] => [
    { from: 1, describe: "one", run: async (_redis, prefix) => void log.push(`1@${prefix}`) },
    { from: 2, describe: "two", run: async (_redis, prefix) => void log.push(`2@${prefix}`) },
  ];

  it("runs each step from the stored layout on, writing the version after each", async () => {
    const redis = new RedisMock() as unknown as RedisClient;
    await redis.set("p:layout", "1");
    const log: string[] = [];
    const said: string[] = [];
    const done = await migrateLayout(redis, "p", (l) => said.push(l), steps(log), 3);
    expect(done).toEqual({ from: 1, to: 3, steps: 2 });
    expect(log).toEqual(["1@p", "2@p"]);
    expect(said).toEqual(["layout 1 -> 2: one", "layout 2 -> 3: two"]);
    expect(await redis.get("p:layout")).toBe("3");
  });

  it("goes on where an interrupted run stopped", async () => {
    const redis = new RedisMock() as unknown as RedisClient;
    await redis.set("q:layout", "2");
    const log: string[] = [];
    await migrateLayout(redis, "q", () => {}, steps(log), 3);
    expect(log).toEqual(["2@q"]);
  });

  it("stamps a store without a version with this version's layout and refuses one it has no step for", async () => {
    const redis = new RedisMock() as unknown as RedisClient;
    expect(await migrateLayout(redis, "r", () => {}, [], LAYOUT_VERSION)).toEqual({
      from: LAYOUT_VERSION,
      to: LAYOUT_VERSION,
      steps: 0,
    });
    await redis.set("s:layout", "1");
    await expect(migrateLayout(redis, "s", () => {}, [], 2)).rejects.toThrow(LayoutVersionError);
    await redis.set("t:layout", "5");
    await expect(migrateLayout(redis, "t", () => {}, [], 2)).rejects.toThrow(/newer payouts/);
  });
});
