/**
 * `payouts audit`: a batch held against every payment the service holds for it, over real HTTP. The
 * differences are made as they happen to a real service: a second payment for one row (made on the
 * service beside the tool's own), a payment the row records that the service no longer lists for the
 * batch (its metadata edited while scheduled), and a payment whose amount changed on its way (an HTTP
 * proxy between the worker and the sandbox rewrites one create's amount). The outcome is kept on the
 * batch; the command exits 1 and writes the report; a batch that matches exits 0; the API answers the
 * same.
 */
import { readFile } from "node:fs/promises";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pauseBatch } from "../../../src/batch-control/index.js";
import { type AuditReport, auditAndRecord, auditBatch } from "../../../src/ledger-audit/index.js";
import { createPayoutsClient, type PayoutsClient } from "../../../src/payouts-api/index.js";
import { createWorkerClient, type PaymentService, startPaymentService } from "../../../src/pipeline/index.js";
import { type ReconcileService, startReconcileService } from "../../../src/reconcile/index.js";
import { type RunningServer, startServer } from "../../../src/server/index.js";
import { PIPELINE_DEFAULTS, SERVER_DEFAULTS } from "../../support/settings.js";
import { until } from "../../support/wait.js";
import { instruction, type PipelineHarness, pipelineHarness, REDIS_URL } from "../pipeline/helpers.js";
import { spawnCli } from "../pipeline/processes.js";

/** Creates of this amount reach the service one dollar higher. */
const ALTERED_AMOUNT = 33_300;

/** A proxy that forwards everything, rewriting the amount of one payment's create on its way. */
async function amountRewritingProxy(upstream: string): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(upstream);
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body = Buffer.concat(chunks);
    if (req.method === "POST" && req.url?.endsWith("/payments") && body.length > 0) {
      const json = JSON.parse(body.toString("utf8")) as { amount?: number };
      if (json.amount === ALTERED_AMOUNT)
        body = Buffer.from(JSON.stringify({ ...json, amount: ALTERED_AMOUNT + 100 }));
    }
    const headers = { ...req.headers, host: target.host, "content-length": String(body.length) };
    const forward = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on("error", () => res.destroy());
    forward.end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

let sandbox: RunningSandbox;
let h: PipelineHarness;
let proxy: Awaited<ReturnType<typeof amountRewritingProxy>>;
let worker: PaymentService;
let reconcile: ReconcileService;
let client: PayoutsClient;

beforeAll(async () => {
  sandbox = await startSandbox({ clock: { toInProgressMs: 20, toFinalMs: 20 } });
  h = await pipelineHarness(sandbox, "ledger-audit");
  proxy = await amountRewritingProxy(sandbox.url);
  worker = await startPaymentService({
    ...PIPELINE_DEFAULTS,
    redisUrl: REDIS_URL,
    prefix: h.prefix,
    jobs: { attempts: 8, backoffMs: 50 },
    client: createWorkerClient({ apiUrl: proxy.url, apiKey: sandbox.apiKey, entityId: "me" }),
    concurrency: 4,
  });
  client = createPayoutsClient({ entityId: "me", baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  // No webhooks here: the sweep marks every open row at once and the looks bring them up to date.
  reconcile = await startReconcileService({
    redisUrl: REDIS_URL,
    prefix: h.prefix,
    client: createWorkerClient({ apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: "me" }),
    sweepEveryMs: 100,
    staleAfterMs: 0,
    quietMs: 0,
    lookEveryMs: 50,
  });
});

afterAll(async () => {
  await reconcile?.stop(2000);
  await worker?.stop(2000);
  await client?.close();
  await proxy?.close();
  await h.close();
  await sandbox.close();
});

/** The environment of `payouts audit` run as a command against this file's sandbox and Redis. */
function cliEnv(): Record<string, string> {
  return {
    REDIS_URL,
    PAYOUTS_API_URL: sandbox.url,
    PAYOUTS_API_KEY: sandbox.apiKey,
    DATA_DIR: h.dataDir,
    LOG_LEVEL: "warn",
  };
}

/** A batch whose rows all hold their payments, settled (`completed`) unless held at the service. */
async function paidBatch(rows: ReturnType<typeof instruction>[]): Promise<string> {
  const batchId = await h.submit(rows);
  await until("every row to follow its payment", async () => {
    const listed = await h.store.listRows(batchId);
    const settled = (r: (typeof listed)[number]) =>
      r.instruction.amount % 100 === 77 ? r.state === "submitted" : r.state === "completed";
    return listed.length === rows.length && listed.every(settled) ? listed : undefined;
  });
  return batchId;
}

describe("payouts audit", () => {
  let batchId: string;
  let rows: ReturnType<typeof instruction>[];
  let report: AuditReport;

  beforeAll(async () => {
    rows = [
      instruction({ amount: 31_000 }),
      instruction({ amount: 31_077 }), // held `scheduled`: its metadata can still be edited
      instruction({ amount: ALTERED_AMOUNT }),
      instruction({ amount: 31_200 }),
      instruction({ amount: 31_300 }),
    ];
    batchId = await paidBatch(rows);
    const [, held, , twice] = await Promise.all(rows.map((r) => h.store.getRow(batchId, r.rowKey)));
    // Someone edits the held payment's metadata at the service: it no longer names the batch.
    await client.payments.update(held!.paymentId!, { metadata: { payouts_batch: "elsewhere" } });
    // A second payment for one row appears at the service.
    await client.payments.create(
      {
        amount: rows[3]!.amount,
        originatingAccountId: rows[3]!.originatingAccountId,
        receivingAccountId: rows[3]!.receivingAccountId,
        deliveryPreference: rows[3]!.deliveryPreference,
        externalId: `${rows[3]!.reference}-again`,
        metadata: { payouts_batch: batchId, payouts_row: twice!.rowKey, payouts_attempt: "1" },
      },
      { idempotencyKey: `again-${batchId}` },
    );
    report = (await auditAndRecord({ store: h.store, client, batchId })).report;
  });

  it("finds a second payment for a row, a payment the service no longer holds for the batch, and a changed amount", () => {
    const found = report.differences.map((d) => [d.kind, d.rowNumber]);
    expect(found).toEqual(
      expect.arrayContaining([
        ["missing-payment", rows[1]!.rowNumber],
        ["amount-differs", rows[2]!.rowNumber],
        ["second-payment", rows[3]!.rowNumber],
      ]),
    );
    expect(report.differences).toHaveLength(3);
    const amount = report.differences.find((d) => d.kind === "amount-differs");
    expect(amount).toMatchObject({ expected: String(ALTERED_AMOUNT), found: String(ALTERED_AMOUNT + 100) });
    expect(report).toMatchObject({ rows: 5, payments: 5, matched: 2 });
    expect(report.summary).toBe(
      "ledger: 2 of 5 rows match, 3 differences (1 missing-payment, 1 second-payment, 1 amount-differs)",
    );
  });

  it("keeps its outcome on the batch, where status, the API and the notification read it", async () => {
    const batch = await h.store.getBatch(batchId);
    expect(batch?.ledger).toMatchObject({
      rows: 5,
      matched: 2,
      differences: 3,
      byKind: { "missing-payment": 1, "second-payment": 1, "amount-differs": 1 },
      summary: report.summary,
    });
  });

  it("as a command: exits 1 on differences and writes them to the report; exits 0 for a batch that matches", async () => {
    const env = cliEnv();
    const bad = spawnCli(["audit", batchId, "--redis-prefix", h.prefix, "--format", "json"], env);
    expect(await bad.exited).toBe(1);
    const reportLine = bad.output.find((l) => l.startsWith("report: "));
    expect(bad.output[0]).toBe(report.summary);
    const written = JSON.parse(await readFile(reportLine!.slice("report: ".length), "utf8")) as {
      kind: string;
    }[];
    expect(written.map((d) => d.kind).sort()).toEqual([
      "amount-differs",
      "missing-payment",
      "second-payment",
    ]);

    const clean = await paidBatch([instruction({ amount: 32_000 }), instruction({ amount: 32_100 })]);
    const good = spawnCli(["audit", clean, "--redis-prefix", h.prefix], env);
    expect(await good.exited).toBe(0);
    expect(good.output[0]).toBe("ledger: 2 rows match, 0 differences");
    expect((await auditBatch({ store: h.store, client, batchId: clean })).differences).toEqual([]);

    const unknown = spawnCli(["audit", "b-no-such-batch", "--redis-prefix", h.prefix], env);
    expect(await unknown.exited).toBe(2);
  });

  it("over the API: GET /api/v1/batches/{id}/audit answers the same, differences by row", async () => {
    const serverClient = createPayoutsClient({
      entityId: "me",
      baseUrl: sandbox.url,
      apiKey: sandbox.apiKey,
    });
    const server: RunningServer = await startServer({
      ...PIPELINE_DEFAULTS,
      ...SERVER_DEFAULTS,
      redisUrl: REDIS_URL,
      prefix: h.prefix,
      webhookSecret: sandbox.apiKey,
      client: serverClient,
      dataDir: h.dataDir,
    });
    try {
      const { token } = await server.auth.createToken("auditor", "viewer", "test");
      const res = await fetch(`${server.url}/api/v1/batches/${batchId}/audit?limit=2`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({
        batchId,
        summary: report.summary,
        matches: false,
        rows: 5,
        payments: 5,
        byKind: { "missing-payment": 1, "second-payment": 1, "amount-differs": 1 },
        truncated: true,
      });
      expect(body.differences).toHaveLength(2);
      // The batch view shows the outcome kept on the batch.
      const view = await fetch(`${server.url}/api/v1/batches/${batchId}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(((await view.json()) as { ledger: { summary: string } }).ledger.summary).toBe(report.summary);
      const none = await fetch(`${server.url}/api/v1/batches/b-no-such-batch/audit`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(none.status).toBe(404);
      expect((await fetch(`${server.url}/api/v1/batches/${batchId}/audit`)).status).toBe(401);
    } finally {
      await server.close(1000);
      await serverClient.close();
    }
  });
});

describe("a row behind its payment when the audit reads it (returned since its last look)", () => {
  /** A finished batch of two completed rows, whose second payment the bank then returns. */
  async function batchWithReturn(base: number): Promise<{ batchId: string; returnedKey: string }> {
    const rows = [instruction({ amount: base }), instruction({ amount: base + 100 })];
    const batchId = await paidBatch(rows);
    const paid = (await h.store.getRow(batchId, rows[1]!.rowKey))!;
    const answer = await fetch(`${sandbox.url}/_sandbox/payments/${paid.paymentId}/return`, {
      method: "POST",
      headers: { "api-key": sandbox.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ reason: { code: "R03", message: "no account" } }),
    });
    expect(answer.status).toBe(200);
    // No webhooks in this file, and a finished batch is not swept: nothing else looks at it.
    return { batchId, returnedKey: rows[1]!.rowKey };
  }

  it("follows it first where the audit can apply it (the worker's audit of a finished batch): no stale difference is kept", async () => {
    const { batchId, returnedKey } = await batchWithReturn(34_000);
    const { report } = await auditAndRecord({
      store: h.store,
      client,
      batchId,
      follow: (payments) => reconcile.processor.applyPayments(payments),
    });
    expect(report.summary).toBe("ledger: 2 rows match, 0 differences");
    expect(report.behind).toBe(0);
    expect(await h.store.getRow(batchId, returnedKey)).toMatchObject({
      state: "returned",
      errorCode: "PAYMENT_RETURNED",
    });
    expect((await h.store.getBatch(batchId))?.ledger?.differences).toBe(0);
  });

  it("says the row has not followed yet where it cannot, and marks the row for the reconciler, which follows", async () => {
    const { batchId, returnedKey } = await batchWithReturn(35_000);
    const alone = await auditBatch({ store: h.store, client, batchId });
    expect(alone.differences).toHaveLength(1);
    expect(alone.differences[0]!.kind).toBe("state-differs");
    expect(alone.behind).toBe(1);
    expect(alone.summary).toBe(
      "ledger: 1 of 2 rows match, 1 difference (1 state-differs; 1 only behind their payment)",
    );
    expect(alone.differences[0]!.message).toMatch(
      /is failed, the row says completed .*has not followed it yet/,
    );
    expect((await h.store.getRow(batchId, returnedKey))?.state).toBe("completed");

    // `payouts audit` marks the row, says so, and the running reconciler makes it follow.
    const env = cliEnv();
    const first = spawnCli(["audit", batchId, "--redis-prefix", h.prefix], env);
    expect(await first.exited).toBe(1);
    expect(first.output.join("\n")).toContain("1 row(s) have not followed their payment's newer state yet");
    await until("the reconciler to follow the marked row", async () => {
      const row = await h.store.getRow(batchId, returnedKey);
      return row?.state === "returned" ? row : undefined;
    });
    const again = spawnCli(["audit", batchId, "--redis-prefix", h.prefix], env);
    expect(await again.exited).toBe(0);
    expect((await auditBatch({ store: h.store, client, batchId })).differences).toEqual([]);
  });
});

describe("a row that records no payment while the service holds two of its attempt", () => {
  it("counts as one row behind, beside its unrecorded and its second payment", async () => {
    const rows = [instruction({ amount: 36_000 })];
    // Paused before its job is added: the worker never sends it, so the row records no payment.
    const batchId = await h.submit(rows, {
      beforeEnqueue: async (id) => {
        await pauseBatch(h.store, id, { by: "test", reason: "held for the test" });
      },
    });
    const row = (await h.store.getRow(batchId, rows[0]!.rowKey))!;
    for (const n of [1, 2]) {
      await client.payments.create(
        {
          amount: rows[0]!.amount,
          originatingAccountId: rows[0]!.originatingAccountId,
          receivingAccountId: rows[0]!.receivingAccountId,
          deliveryPreference: rows[0]!.deliveryPreference,
          externalId: `${rows[0]!.reference}-elsewhere-${n}`,
          metadata: { payouts_batch: batchId, payouts_row: row.rowKey, payouts_attempt: "1" },
        },
        { idempotencyKey: `elsewhere-${batchId}-${n}` },
      );
    }
    const report = await auditBatch({ store: h.store, client, batchId });
    expect(report.differences.map((d) => d.kind).sort()).toEqual(["second-payment", "unrecorded-payment"]);
    expect(report.behind).toBe(1);
    expect(report.summary).toBe(
      "ledger: 0 of 1 rows match, 2 differences (1 unrecorded-payment, 1 second-payment; 1 only behind their payment)",
    );
  });
});
