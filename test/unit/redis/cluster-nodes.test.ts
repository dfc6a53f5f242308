/** REDIS_CLUSTER_NODES parsing and the hash-tagged key prefix a cluster needs (pure). */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/index.js";
import { hashTaggedPrefix, parseClusterNodes } from "../../../src/redis/index.js";

describe("parseClusterNodes", () => {
  it("reads host:port items, IPv6 in brackets, spaces and a trailing comma ignored", () => {
    expect(parseClusterNodes("10.0.0.5:7000, redis-b.internal:7001,[::1]:7002,")).toEqual([
      { host: "10.0.0.5", port: 7000 },
      { host: "redis-b.internal", port: 7001 },
      { host: "::1", port: 7002 },
    ]);
  });

  it.each(["", " , ", "10.0.0.5", "10.0.0.5:0", "10.0.0.5:70000", "redis://10.0.0.5:7000", "::1:7000"])(
    "refuses %j, naming the item",
    (value) => {
      expect(() => parseClusterNodes(value)).toThrow(/host:port/);
    },
  );

  it("is checked by loadConfig, which names the variable", () => {
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: "10.0.0.5" })).toThrow(
      /REDIS_CLUSTER_NODES: "10\.0\.0\.5" is not host:port/,
    );
    expect(loadConfig({ REDIS_CLUSTER_NODES: "127.0.0.1:7101" }).redisClusterNodes).toEqual([
      { host: "127.0.0.1", port: 7101 },
    ]);
    expect(loadConfig({}).redisClusterNodes).toBeUndefined();
  });
});

describe("hashTaggedPrefix", () => {
  it("wraps a plain prefix in a hash tag and keeps one that has a tag", () => {
    expect(hashTaggedPrefix("payouts")).toBe("{payouts}");
    expect(hashTaggedPrefix("acme:payouts")).toBe("{acme:payouts}");
    expect(hashTaggedPrefix("{payouts}")).toBe("{payouts}");
    expect(hashTaggedPrefix("tenant-{acme}")).toBe("tenant-{acme}");
  });

  it("an empty tag `{}` is no tag (Redis hashes the whole key then), so it is wrapped", () => {
    expect(hashTaggedPrefix("{}payouts")).toBe("{{}payouts}");
  });
});
