/**
 * The webhook receiver of `payouts serve` over real HTTP, with a real Redis and the sandbox (for the
 * health check). No reconciler runs here, so the marks a delivery left on its row stay visible.
 */

import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type RunningSandbox, signWebhookBody, startSandbox } from "@payouts/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createPayoutsClient, type PayoutsClient } from "../../../src/payouts-api/index.js";
import { connectRedis } from "../../../src/pipeline/index.js";
import { LOOSE_BATCH, LookIndex } from "../../../src/reconcile/index.js";
import type { RedisClient } from "../../../src/redis/index.js";
import { type RunningServer, startServer, WEBHOOK_PATH } from "../../../src/server/index.js";
import { dedupeId } from "../../../src/server/webhook-dedupe.js";
import { PIPELINE_DEFAULTS, SERVER_DEFAULTS } from "../../support/settings.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";

let sandbox: RunningSandbox;
let client: PayoutsClient;
let server: RunningServer;
let redis: RedisClient;
let dir: string;
const prefix = uniquePrefix("webhook-receiver");
const SECRET = "whsec_receiver_test_secret";

function delivery(overrides: Record<string, unknown> = {}): Buffer {
  return Buffer.from(
    JSON.stringify({
      event: "api.payment.updated",
      messageId: `msg_${randomBytes(6).toString("hex")}`,
      id: `pay_${randomBytes(6).toString("hex")}`,
      entityId: "ent_acme_corp",
      occurredAt: new Date().toISOString(),
      metadata: { payouts_batch: "b1", payouts_row: "R1", payouts_attempt: "1" },
      ...overrides,
    }),
  );
}

async function post(body: Buffer, signature: string | undefined): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${server.url}${WEBHOOK_PATH}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(signature !== undefined ? { "x-service-signature": signature } : {}),
    },
    body,
  });
  return { status: res.status, json: await res.json() };
}

interface Marked {
  batchId: string;
  row: string;
  paymentId: string | undefined;
  attempt: number | undefined;
}

/** Every mark a delivery left (rows of any batch, and payment ids that name no row). */
async function marked(): Promise<Marked[]> {
  const index = new LookIndex(redis, prefix);
  const out: Marked[] = [];
  const batches = (await redis.keys(`${prefix}:batch:*:looks`)).map((k) =>
    k.slice(`${prefix}:batch:`.length, -":looks".length),
  );
  for (const batchId of [...batches, LOOSE_BATCH]) {
    for (const m of await index.dueMarks(batchId, Number.MAX_SAFE_INTEGER, 10_000)) {
      out.push({ batchId, row: m.member, paymentId: m.hint?.paymentId, attempt: m.hint?.attempt });
    }
  }
  return out.sort((a, b) => a.row.localeCompare(b.row));
}

async function seenKeys(): Promise<string[]> {
  return redis.keys(`${prefix}:webhooks:seen:*`);
}

beforeAll(async () => {
  sandbox = await startSandbox();
  client = createPayoutsClient({
    entityId: "me",
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    retry: { maxAttempts: 1 },
  });
  dir = await mkdtemp(path.join(tmpdir(), "payouts-serve-"));
  await writeFile(path.join(dir, "batch_ok-result.csv"), "reference,status\nINV-1,completed\n");
  server = await startServer({
    ...PIPELINE_DEFAULTS,
    ...SERVER_DEFAULTS,
    redisUrl: REDIS_URL,
    prefix,
    webhookSecret: SECRET,
    client,
    bodyLimitBytes: 4096,
    resultFile: async (batchId, format) =>
      batchId === "batch_ok" && format === "csv"
        ? { path: path.join(dir, "batch_ok-result.csv") }
        : undefined,
  });
  redis = connectRedis(REDIS_URL);
});

afterEach(async () => {
  await deleteKeys(redis, `${prefix}:webhooks`);
  await deleteKeys(redis, `${prefix}:batch`);
  await deleteKeys(redis, `${prefix}:reconcile`);
});

afterAll(async () => {
  await server.close();
  await deleteKeys(redis, prefix);
  await redis.quit();
  await client.close();
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

describe("POST /webhooks/payouts", () => {
  it("marks the payment's row (named by the delivery's metadata) for a look, with the payment id as a hint", async () => {
    const body = delivery({ id: "pay_signed_ok", messageId: "msg_signed_ok" });
    const res = await post(body, signWebhookBody(SECRET, body));
    expect(res.status).toBe(202);
    expect(await marked()).toEqual([{ batchId: "b1", row: "R1", paymentId: "pay_signed_ok", attempt: 1 }]);
    // No job per payment: the reconcile queue holds no job.
    expect((await redis.keys(`${prefix}:bull:reconcile:*`)).filter((k) => !k.endsWith(":meta"))).toEqual([]);
  });

  it("marks a payment whose delivery names no row of ours by its id alone", async () => {
    const body = delivery({ id: "pay_no_metadata", metadata: undefined });
    expect((await post(body, signWebhookBody(SECRET, body))).status).toBe(202);
    expect(await marked()).toEqual([
      { batchId: LOOSE_BATCH, row: "pay_no_metadata", paymentId: undefined, attempt: undefined },
    ]);
  });

  it("answers 401 and does nothing else for a signature made with another secret", async () => {
    const body = delivery();
    const res = await post(body, signWebhookBody("someone-elses-secret", body));
    expect(res.status).toBe(401);
    expect(await marked()).toEqual([]);
    expect(await seenKeys()).toEqual([]);
  });

  it("answers 401 for a body altered by one byte after it was signed", async () => {
    const body = delivery({ id: "pay_aaaaaaaaaaaa" });
    const signature = signWebhookBody(SECRET, body);
    const altered = Buffer.from(body.toString("utf8").replace("pay_aaaaaaaaaaaa", "pay_aaaaaaaaaaab"));
    expect(altered.length).toBe(body.length);
    const res = await post(altered, signature);
    expect(res.status).toBe(401);
    expect(await marked()).toEqual([]);
    expect(await seenKeys()).toEqual([]);
  });

  it("answers 401 for a delivery without a signature, even when its body is invalid", async () => {
    expect((await post(delivery(), undefined)).status).toBe(401);
    expect((await post(Buffer.from("not json at all"), undefined)).status).toBe(401);
    expect(await marked()).toEqual([]);
  });

  it("answers a duplicate delivery (same messageId) as a duplicate; its row keeps one mark", async () => {
    const body = delivery({ messageId: "msg_dup" });
    const signature = signWebhookBody(SECRET, body);
    const first = await post(body, signature);
    const second = await post(body, signature);
    expect(first.status).toBe(202);
    expect(second.status).toBe(200);
    expect(second.json).toEqual({ status: "duplicate" });
    // The mark goes out with the dedupe check (one round trip): a duplicate marks the same row again,
    // which only moves its look later; the row still has one mark, one look.
    expect(await marked()).toEqual([{ batchId: "b1", row: "R1", paymentId: expect.any(String), attempt: 1 }]);
    // The messageId is remembered for at least seven days, as a digest in one of today's buckets
    // (webhook-dedupe.ts), next to the day's count.
    const keys = await seenKeys();
    const buckets = keys.filter((k) => /:d\d+:\d+:\d+$/.test(k));
    expect(buckets).toHaveLength(1);
    expect(await redis.hexists(buckets[0]!, dedupeId("msg_dup").digest)).toBe(1);
    for (const key of keys) expect(await redis.ttl(key)).toBeGreaterThanOrEqual(7 * 24 * 3600 - 60);
  });

  it("under a burst, checks deliveries together: each duplicate once answered duplicate, every payment's row marked", async () => {
    // 40 deliveries at once for 20 payments (rows) of 2 deliveries each, every delivery sent twice.
    const bodies = Array.from({ length: 40 }, (_, i) =>
      delivery({
        id: `pay_burst_${i % 20}`,
        messageId: `msg_burst_${i}`,
        metadata: { payouts_batch: "b1", payouts_row: `R${i % 20}`, payouts_attempt: "1" },
      }),
    );
    const answers = await Promise.all(
      [...bodies, ...bodies].map((body) => post(body, signWebhookBody(SECRET, body))),
    );
    expect(answers.filter((a) => a.status === 202)).toHaveLength(40);
    expect(
      answers.filter((a) => a.status === 200 && (a.json as { status: string }).status === "duplicate"),
    ).toHaveLength(40);
    const marks = await marked();
    // No payment is left without its look (two deliveries of one payment share its row's mark).
    expect(new Set(marks.map((m) => m.paymentId))).toEqual(
      new Set(Array.from({ length: 20 }, (_, i) => `pay_burst_${i}`)),
    );
    expect(marks).toHaveLength(20);
  });

  it("acknowledges account and limitation events and unknown event types without marking anything", async () => {
    for (const event of ["api.account.updated", "api.limitation.updated", "api.brand.new"]) {
      const body = delivery({ event, id: "acct_vendor_ach" });
      const res = await post(body, signWebhookBody(SECRET, body));
      expect(res.status).toBe(200);
    }
    expect(await marked()).toEqual([]);
  });

  it("answers 400 for a signed body that is not a delivery, and 413 for one over the size limit", async () => {
    const junk = Buffer.from("[1,2,3]");
    expect((await post(junk, signWebhookBody(SECRET, junk))).status).toBe(400);
    const big = delivery({ data: { padding: "x".repeat(8000) } });
    expect((await post(big, signWebhookBody(SECRET, big))).status).toBe(413);
    expect(await marked()).toEqual([]);
  });

  it("counts what it did in /metrics", async () => {
    const body = delivery();
    await post(body, "0".repeat(64));
    const { token } = await server.auth.createToken("prometheus", "viewer", "test");
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    const text = await (
      await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
    ).text();
    expect(text).toMatch(/payouts_webhook_deliveries_total\{outcome="unauthorized"\} [1-9]/);
  });
});

describe("GET /healthz", () => {
  it("is 200 when Redis and the Payouts Service answer", async () => {
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: "ok",
      checks: { redis: { ok: true }, api: { ok: true } },
    });
  });

  it("is 503 naming the failed check, without secrets, when the service is unreachable", async () => {
    const dead = createPayoutsClient({
      entityId: "me",
      baseUrl: "http://127.0.0.1:9/v2",
      apiKey: "sk_do_not_echo_me",
      retry: { maxAttempts: 1 },
    });
    const other = await startServer({
      ...PIPELINE_DEFAULTS,
      ...SERVER_DEFAULTS,
      redisUrl: REDIS_URL,
      prefix,
      webhookSecret: SECRET,
      client: dead,
    });
    try {
      const res = await fetch(`${other.url}/healthz`);
      const text = await res.text();
      expect(res.status).toBe(503);
      expect(JSON.parse(text)).toMatchObject({
        status: "unavailable",
        checks: { redis: { ok: true }, api: { ok: false } },
      });
      expect(text).not.toContain("sk_do_not_echo_me");
    } finally {
      await other.close();
      await dead.close();
    }
  });
});

describe("GET /batches/:id/result.csv", () => {
  let auth: { authorization: string };
  beforeAll(async () => {
    const { token } = await server.auth.createToken("downloads", "viewer", "test");
    auth = { authorization: `Bearer ${token}` };
  });

  it("needs a token or a session", async () => {
    expect((await fetch(`${server.url}/batches/batch_ok/result.csv`)).status).toBe(401);
  });

  it("streams the batch's result file as an attachment", async () => {
    const res = await fetch(`${server.url}/batches/batch_ok/result.csv`, { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="batch_ok-result.csv"');
    expect(res.headers.get("content-type")).toContain("text/csv");
    expect(await res.text()).toBe("reference,status\nINV-1,completed\n");
  });

  it("is 404 when there is no such file or batch id", async () => {
    expect((await fetch(`${server.url}/batches/batch_ok/result.xlsx`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${server.url}/batches/nope/result.csv`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${server.url}/batches/..%2Fetc/result.csv`, { headers: auth })).status).toBe(404);
  });
});
