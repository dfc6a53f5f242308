/**
 * The worker's approval sweep on a real Redis: it announces a held batch once (signed), finishes the
 * follow-up of a decision whose process died, expires overdue batches (in the audit trail too).
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AwaitingApprovalNotice, startApprovalService } from "../../../src/approvals/sweep/index.js";
import { AuditTrail } from "../../../src/audit/index.js";
import { verifyNotification } from "../../../src/notify/index.js";
import { PIPELINE_DEFAULTS } from "../../support/settings.js";
import { type ApprovalHarness, approvalHarness, instruction, policyOf, REDIS_URL } from "./helpers.js";

const SECRET = "approvals-notify-secret";
const policy = policyOf("USD:1000,EUR:500", 1, 1);
let h: ApprovalHarness;
const received: Array<{ raw: Buffer; headers: IncomingMessage["headers"] }> = [];
const receiver = createServer(async (req: IncomingMessage, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  received.push({ raw: Buffer.concat(chunks), headers: req.headers });
  res.statusCode = 204;
  res.end();
});

beforeAll(async () => {
  h = await approvalHarness("approvals-sweep", policy);
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
});
afterAll(async () => {
  await h.close();
  await new Promise((r) => receiver.close(r));
});

function service(now?: () => Date) {
  return startApprovalService({
    ...PIPELINE_DEFAULTS,
    redisUrl: REDIS_URL,
    prefix: h.prefix,
    approval: policy,
    everyMs: 0,
    notify: {
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/n`,
      secret: SECRET,
      retry: { maxAttempts: 2, baseDelayMs: 10 },
    },
    ...(now ? { now } : {}),
  });
}

describe("the approval sweep", () => {
  it("announces a held batch once, signed, with its totals and the threshold it reached", async () => {
    const { batchId } = await h.submit(
      [instruction({ amount: 150_000 }), instruction({ amount: 60_000, currency: "EUR" })],
      "carol",
    );
    const sweeper = await service(); // runs one sweep on start
    try {
      await sweeper.sweep();
      const mine = received.filter((r) => JSON.parse(r.raw.toString()).data.batchId === batchId);
      expect(mine).toHaveLength(1);
      const { raw, headers } = mine[0]!;
      const verified = verifyNotification(raw, headers, SECRET);
      expect(verified.type).toBe("batch.awaiting_approval");
      const notice = verified.data as AwaitingApprovalNotice;
      expect(notice).toMatchObject({
        event: "batch.awaiting_approval",
        batchId,
        submittedBy: "carol",
        required: 1,
        rows: 2,
        totals: { USD: { minor: 150_000, amount: "1500.00" }, EUR: { minor: 60_000, amount: "600.00" } },
        reasons: [
          { currency: "EUR", total: "600.00", threshold: "500.00", rule: "EUR" },
          { currency: "USD", total: "1500.00", threshold: "1000.00", rule: "USD" },
        ],
      });
    } finally {
      await sweeper.stop();
    }
  });

  it("finishes the follow-up of an approval whose process died before queueing", async () => {
    const { batchId } = await h.submit([instruction({ amount: 150_000 })], "carol");
    expect((await h.pipeline.approvals.approve(batchId, "alice")).outcome).toBe("approved");
    expect(await h.rowsInJobs(batchId)).toEqual([]);
    const sweeper = await service();
    try {
      expect(await h.rowsInJobs(batchId)).toHaveLength(1);
      expect(await h.pipeline.approvals.unsettledBatchIds()).not.toContain(batchId);
    } finally {
      await sweeper.stop();
    }
  });

  it("expires overdue batches, cancels their rows and writes the expiry to the audit trail", async () => {
    const { batchId } = await h.submit([instruction({ amount: 150_000 })], "carol");
    const sweeper = await service(() => new Date(Date.now() + 2 * 3_600_000));
    try {
      const record = await h.pipeline.approvals.get(batchId);
      expect(record?.status).toBe("expired");
      expect(record?.settledAt).toBeDefined();
      expect((await h.pipeline.store.listRows(batchId)).map((r) => [r.state, r.errorCode])).toEqual([
        ["canceled", "APPROVAL_EXPIRED"],
      ]);
      const audit = await new AuditTrail(h.pipeline.redis, h.prefix).list({ limit: 50 });
      expect(audit.data).toContainEqual(
        expect.objectContaining({
          action: "batch.expire",
          target: batchId,
          outcome: "ok",
          actor: expect.objectContaining({ kind: "system", name: "system:expiry" }),
        }),
      );
    } finally {
      await sweeper.stop();
    }
  });
});
