/**
 * The webhook receiver's memory of messageIds (webhook-dedupe.ts) on a real Redis: ids found again
 * across levels as a day's buckets grow, buckets that stay listpacks, forgetting, and a dedupe check that lands after its 503 (a private
 * redis-server, paused with CLIENT PAUSE, so no other test's Redis stalls), and the scripts on a real
 * 3-master Redis Cluster.
 */

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { signWebhookBody } from "@payouts/sandbox";
import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPrivateCluster, startPrivateRedis } from "../../../src/demo/private-redis.js";
import { connectRedis } from "../../../src/pipeline/index.js";
import { LOOSE_BATCH, LookIndex, lookMarker } from "../../../src/reconcile/index.js";
import { BUCKET_FILL, hashTaggedPrefix, LEVEL_BUCKETS, type RedisClient } from "../../../src/redis/index.js";
import { createWebhookReceiver } from "../../../src/server/index.js";
import { createDedupeStore, dedupeDays, dedupeId } from "../../../src/server/webhook-dedupe.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";

const TTL = 7 * 24 * 3600;
const ids = (label: string, n: number) => Array.from({ length: n }, (_, i) => `msg_${label}_${i}`);

async function keysUnder(redis: RedisClient, pattern: string): Promise<string[]> {
  return (redis as Redis).keys(pattern);
}

describe("webhook dedupe store", () => {
  let redis: RedisClient;
  const prefix = uniquePrefix("dedupe-store");
  beforeAll(() => {
    redis = connectRedis(REDIS_URL);
  });
  afterAll(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  it("finds every id again after the day's buckets grew a level, and keeps each bucket a listpack", async () => {
    const store = createDedupeStore(redis, prefix, TTL);
    // Past the first level's capacity (16 buckets × 90), so later ids go to the 128 buckets of level 1.
    const all = ids("grow", LEVEL_BUCKETS[0] * BUCKET_FILL + 1500).map(dedupeId);
    for (let i = 0; i < all.length; i += 500) {
      expect(await store.seenFirst(all.slice(i, i + 500))).toEqual(all.slice(i, i + 500).map(() => true));
    }
    // The same ids again, level 0's first among them, in other groupings: every one a duplicate.
    for (let i = 0; i < all.length; i += 700) {
      expect(await store.seenFirst(all.slice(i, i + 700))).toEqual(all.slice(i, i + 700).map(() => false));
    }
    const { counts } = dedupeDays(prefix, Date.now(), TTL);
    expect(Number(await redis.get(counts[0]!))).toBe(all.length);
    const buckets = (await keysUnder(redis, `${prefix}:webhooks:seen:d*:*:*`)).sort();
    expect(buckets.filter((k) => /:0:\d+$/.test(k))).toHaveLength(LEVEL_BUCKETS[0]);
    expect(buckets.some((k) => /:1:\d+$/.test(k))).toBe(true);
    for (const key of buckets) {
      expect(await redis.object("ENCODING", key)).toBe("listpack");
      expect(await redis.ttl(key)).toBeGreaterThanOrEqual(TTL - 60);
    }
  });

  it("answers an id given twice in one call new only the first time", async () => {
    const store = createDedupeStore(redis, prefix, TTL);
    const id = dedupeId("msg_twice_in_one_call");
    expect(await store.seenFirst([id, dedupeId("msg_other"), id])).toEqual([true, true, false]);
  });

  it("forgets an id, at whatever level it was recorded, so it is new again", async () => {
    const store = createDedupeStore(redis, prefix, TTL);
    const late = dedupeId("msg_forget_me");
    expect(await store.seenFirst([late])).toEqual([true]);
    await store.forget(late);
    expect(await store.seenFirst([late])).toEqual([true]);
    expect(await store.seenFirst([late])).toEqual([false]);
  });
});

describe("a dedupe check that lands after its delivery was answered 503", () => {
  let server: Awaited<ReturnType<typeof startPrivateRedis>>;
  let redis: Redis;
  let admin: Redis;
  const prefix = uniquePrefix("late-dedupe");
  const SECRET = "whsec_late_dedupe";

  beforeAll(async () => {
    server = await startPrivateRedis();
    redis = new Redis(server.url, { maxRetriesPerRequest: null });
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    redis.disconnect();
    admin.disconnect();
    await server.stop();
  });

  it("forgets the id it recorded late, so the service's retry is processed, and the next one is a duplicate", async () => {
    const receive = createWebhookReceiver({
      secret: SECRET,
      redis,
      prefix,
      enqueuer: lookMarker(redis, prefix),
      storeTimeoutMs: 200,
    });
    const body = Buffer.from(
      JSON.stringify({
        event: "api.payment.updated",
        messageId: "msg_late_check",
        id: "pay_late_check",
        entityId: "ent_acme_corp",
        occurredAt: new Date().toISOString(),
      }),
    );
    const signature = signWebhookBody(SECRET, body);
    // Redis holds every script for 1 s: the check is answered 503 after 200 ms and lands after that.
    await admin.client("PAUSE", 1000, "WRITE");
    expect((await receive(body, signature)).status).toBe(503);
    const { counts } = dedupeDays(prefix, Date.now(), TTL);
    // It landed (the id was recorded) ...
    for (let i = 0; i < 100 && (await admin.get(counts[0]!)) !== "1"; i++) await sleep(50);
    expect(await admin.get(counts[0]!)).toBe("1");
    // ... and was forgotten right after.
    const id = dedupeId("msg_late_check");
    const holding = async () => {
      let n = 0;
      for (const key of await admin.keys(`${prefix}:webhooks:seen:d*:*:*`))
        n += await admin.hexists(key, id.digest);
      return n;
    };
    for (let i = 0; i < 100 && (await holding()) > 0; i++) await sleep(20);
    expect(await holding()).toBe(0);
    expect((await receive(body, signature)).status).toBe(202);
    expect((await receive(body, signature)).status).toBe(200);
    // The processed retry marked its payment (it names no row: by its id) for a look.
    const marks = await new LookIndex(redis, prefix).dueMarks(LOOSE_BATCH, Number.MAX_SAFE_INTEGER, 10);
    expect(marks.map((m) => m.member)).toEqual(["pay_late_check"]);
  });
});

describe("webhook dedupe store on a Redis Cluster", () => {
  let dir: string;
  let cluster: Awaited<ReturnType<typeof startPrivateCluster>>;
  let client: Cluster;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "payouts-dedupe-cluster-"));
    cluster = await startPrivateCluster(dir);
    client = new Cluster(cluster.ports.map((port) => ({ host: "127.0.0.1", port })));
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("checks, records and forgets many ids in one call, every key in the prefix's slot", async () => {
    const prefix = hashTaggedPrefix("payouts");
    const store = createDedupeStore(client, prefix, TTL);
    const all = ids("cluster", LEVEL_BUCKETS[0] * BUCKET_FILL + 200).map(dedupeId);
    expect(await store.seenFirst(all)).toEqual(all.map(() => true));
    expect(await store.seenFirst(all)).toEqual(all.map(() => false));
    await store.forget(all[0]!);
    expect(await store.seenFirst([all[0]!, all[1]!])).toEqual([true, false]);
    const slot = await client.cluster("KEYSLOT", prefix);
    const keys = (
      await Promise.all(client.nodes("master").map((node) => node.keys(`${prefix}:webhooks:*`)))
    ).flat();
    expect(keys.length).toBeGreaterThan(LEVEL_BUCKETS[0]);
    for (const key of keys) expect(await client.cluster("KEYSLOT", key)).toBe(slot);
  });
});
