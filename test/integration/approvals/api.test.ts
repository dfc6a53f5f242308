/**
 * Approvals over the HTTP API, over real HTTP with a real Redis, the sandbox and the payment worker:
 * a batch over the threshold submitted through the API waits, nobody without the approver role and
 * never its submitter can approve it, an approver's approval gets it paid, a rejection cancels it,
 * and every attempt is in the audit trail.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../../src/server/index.js";
import { type ApiStack, callApi, type Json, startApiStack, uploadSheet } from "../../support/api-stack.js";
import { until } from "../../support/wait.js";
import { policyOf } from "./helpers.js";

/** Runs the built `payouts` with only the server's address and (optionally) a token: no Redis. */
function cli(args: string[], token?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, PAYOUTS_SERVER_URL: server.url };
  if (token) env.PAYOUTS_TOKEN = token;
  return new Promise((resolve) => {
    execFile(process.execPath, [path.resolve("bin/payouts.js"), ...args], { env }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr });
    });
  });
}

const policy = policyOf("USD:150", 1);
let stack: ApiStack;
let server: RunningServer;
const tokens: Record<string, string> = {};

const call = async (who: string, method: string, route: string, body?: unknown) =>
  callApi(server.url, tokens[who], method, route, body);

let sheetNumber = 0;
/** Uploads and submits a two-row USD sheet of `amount` per row as `who`; returns the batch id. */
async function submit(who: string, amount: string): Promise<{ id: string; state: string }> {
  sheetNumber++;
  const sheet = [
    "reference,from_account,to_account,amount,currency,delivery",
    `APR-${sheetNumber}-1,ops-checking,vendor-ach,${amount},USD,standard-ach`,
    `APR-${sheetNumber}-2,ops-checking,vendor-ach-2,${amount},USD,standard-ach`,
  ].join("\n");
  const sheetId = (await uploadSheet(server.url, tokens[who], `approvals-${sheetNumber}.csv`, sheet)).json
    .id as string;
  const submitted = await call(who, "POST", "/api/v1/batches", { sheetId, onInvalid: "reject" });
  expect(submitted.status).toBe(201);
  return submitted.json as { id: string; state: string };
}

async function rowStates(id: string): Promise<string[]> {
  const { json } = await call("viewer", "GET", `/api/v1/batches/${id}/rows`);
  return (json.data as { state: string }[]).map((r) => r.state);
}

beforeAll(async () => {
  stack = await startApiStack({
    label: "approvals-api",
    clock: { toInProgressMs: 600_000, toFinalMs: 600_000 },
    approval: policy,
    // Its periodic sweep only every ten minutes: a batch that finishes sooner was swept on request.
    reconcile: { sweepEveryMs: 600_000, staleAfterMs: 600_000 },
  });
  server = stack.server;
  for (const [name, role] of [
    ["viewer", "viewer"],
    ["clerk", "submitter"],
    ["ann", "approver"],
    ["ben", "approver"],
    ["root", "admin"],
  ] as const) {
    tokens[name] = (await server.auth.createToken(name, role, "test")).token;
  }
});

afterAll(async () => {
  await stack?.close();
});

describe("approvals over the API", () => {
  it("a batch under the threshold is not held and answers approve with 409", async () => {
    const { id, state } = await submit("clerk", "50.00");
    expect(state).not.toBe("awaiting-approval");
    expect((await call("viewer", "GET", `/api/v1/batches/${id}/approval`)).json).toEqual({ approval: null });
    const res = await call("ann", "POST", `/api/v1/batches/${id}/approve`);
    expect([res.status, res.json.error.code]).toEqual([409, "NOT_AWAITING_APPROVAL"]);
  });

  it("held until an approver approves; never by its submitter or without the role; then paid", async () => {
    const { id, state } = await submit("clerk", "100.00");
    expect(state).toBe("awaiting-approval");
    const approval = (await call("viewer", "GET", `/api/v1/batches/${id}/approval`)).json.approval;
    expect(approval).toMatchObject({
      status: "awaiting-approval",
      submittedBy: "clerk",
      required: 1,
      approvals: [],
    });
    // The batch itself, and the batch list, say it waits for approval.
    const held = (await call("viewer", "GET", `/api/v1/batches/${id}`)).json;
    expect(held).toMatchObject({ state: "awaiting-approval", approval: { status: "awaiting-approval" } });
    const listed = (await call("viewer", "GET", "/api/v1/batches?limit=100")).json.data as {
      id: string;
      state: string;
    }[];
    expect(listed.find((b) => b.id === id)?.state).toBe("awaiting-approval");

    for (const who of ["viewer", "clerk"]) {
      const res = await call(who, "POST", `/api/v1/batches/${id}/approve`);
      expect([res.status, res.json.error.code]).toEqual([403, "FORBIDDEN"]);
    }
    await sleep(300);
    expect(await rowStates(id)).toEqual(["queued", "queued"]);

    const approved = await call("ann", "POST", `/api/v1/batches/${id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.json.outcome).toBe("approved");
    expect(approved.json.approval.approvals).toEqual([{ by: "ann", at: expect.any(String) }]);
    const deadline = Date.now() + 20_000;
    while ((await rowStates(id)).includes("queued") && Date.now() < deadline) await sleep(200);
    expect(await rowStates(id)).toEqual(["submitted", "submitted"]);
    const running = (await call("viewer", "GET", `/api/v1/batches/${id}`)).json;
    expect(running.state).not.toBe("awaiting-approval");
    expect(running.approval).toMatchObject({ status: "approved", approvals: [{ by: "ann" }] });

    const late = await call("ben", "POST", `/api/v1/batches/${id}/approve`);
    expect([late.status, late.json.error.code]).toEqual([409, "NOT_AWAITING_APPROVAL"]);
  });

  it("an admin who submitted a batch cannot approve it (403 SELF_APPROVAL), another approver can", async () => {
    const { id } = await submit("root", "100.00");
    const self = await call("root", "POST", `/api/v1/batches/${id}/approve`);
    expect([self.status, self.json.error.code]).toEqual([403, "SELF_APPROVAL"]);
    expect((await call("ben", "POST", `/api/v1/batches/${id}/approve`)).status).toBe(200);
  });

  it("a rejection needs a reason and cancels every row; later decisions get 409", async () => {
    const { id } = await submit("clerk", "100.00");
    expect((await call("ann", "POST", `/api/v1/batches/${id}/reject`, {})).status).toBe(400);
    const rejected = await call("ann", "POST", `/api/v1/batches/${id}/reject`, {
      reason: "duplicate of last week",
    });
    expect(rejected.status).toBe(200);
    expect(rejected.json.approval).toMatchObject({
      status: "rejected",
      decidedBy: "ann",
      reason: "duplicate of last week",
    });
    expect(await rowStates(id)).toEqual(["canceled", "canceled"]);
    expect((await call("viewer", "GET", `/api/v1/batches/${id}`)).json.state).toBe("rejected");
    // Every row is final: the rejection asked the worker for a sweep, which finishes the batch now.
    await until("the rejected batch to finish", async () => {
      const view = (await call("viewer", "GET", `/api/v1/batches/${id}`)).json;
      return view.finishedAt ? view : undefined;
    });
    const late = await call("ben", "POST", `/api/v1/batches/${id}/approve`);
    expect(late.status).toBe(409);
    const unknown = await call("ben", "POST", "/api/v1/batches/b20200101T000000-00000000/approve");
    expect(unknown.status).toBe(404);
  });

  it("every approval, rejection and refused attempt is in the audit trail", async () => {
    const { json } = await call("root", "GET", "/api/v1/audit?limit=200");
    const entries = (json.data as Json[]).filter(
      (e) => e.action === "batch.approve" || e.action === "batch.reject",
    );
    expect(entries).toContainEqual(
      expect.objectContaining({
        action: "batch.approve",
        outcome: "denied",
        actor: expect.objectContaining({ name: "root" }),
        detail: expect.objectContaining({ result: "refused: SELF_APPROVAL" }),
      }),
    );
    expect(entries).toContainEqual(
      expect.objectContaining({
        action: "batch.approve",
        outcome: "ok",
        actor: expect.objectContaining({ name: "ann", kind: "token" }),
        detail: expect.objectContaining({ result: "approved" }),
      }),
    );
    expect(entries).toContainEqual(
      expect.objectContaining({
        action: "batch.reject",
        outcome: "ok",
        detail: expect.objectContaining({ reason: "duplicate of last week" }),
      }),
    );
  });
});

describe("payouts approve | reject", () => {
  it("go through the API with PAYOUTS_TOKEN: no token or the wrong person approves nothing", async () => {
    const { id } = await submit("clerk", "100.00");
    const noToken = await cli(["approve", id]);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain("PAYOUTS_TOKEN");
    const submitter = await cli(["approve", id], tokens.clerk);
    expect(submitter.code).toBe(1);
    expect(submitter.stderr).toContain("FORBIDDEN");
    expect((await call("viewer", "GET", `/api/v1/batches/${id}/approval`)).json.approval.status).toBe(
      "awaiting-approval",
    );
    const approved = await cli(["approve", id], tokens.ben);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain(`batch ${id} approved by ben`);

    const other = await submit("clerk", "100.00");
    const rejected = await cli(["reject", other.id, "--reason", "wrong month"], tokens.ann);
    expect(rejected.code).toBe(0);
    expect(rejected.stdout).toContain("rejected by ann: wrong month");
    expect(await rowStates(other.id)).toEqual(["canceled", "canceled"]);
    // Each run starts a Node process; on a loaded machine that takes seconds.
  }, 120_000);
});
