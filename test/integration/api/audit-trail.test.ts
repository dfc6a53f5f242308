/**
 * The audit trail over the API (docs/design.md §3.14), on the real server, Redis and sandbox: a row
 * corrected through `POST /rows/{row}/correct` goes through the gate (held for approval when the
 * approval rules say so, recorded with its old and new values), and the trail can be filtered by
 * batch, actor and action and exported as CSV with the same filters, every cell safe in a spreadsheet.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseApprovalThresholds } from "../../../src/approvals/index.js";
import { AuditTrail } from "../../../src/audit/index.js";
import {
  type ApiStack,
  callApi,
  type Json,
  startApiStack,
  submitSheetThroughApi,
  until,
} from "../../support/api-stack.js";

let stack: ApiStack;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  stack = await startApiStack({
    label: "audit-trail",
    clock: { toInProgressMs: 50, toFinalMs: 50 },
    reconcile: { sweepEveryMs: 200, staleAfterMs: 100 },
    approval: { thresholds: parseApprovalThresholds("USD:1000"), required: 1, expiresHours: 72 },
  });
  for (const [name, role] of [
    ["clerk", "submitter"],
    ["ann", "approver"],
    ["root", "admin"],
  ] as const) {
    tokens[name] = (await stack.server.auth.createToken(name, role, "test")).token;
  }
});

afterAll(async () => {
  await stack?.close();
});

const call = (who: string, method: string, route: string, body?: unknown) =>
  callApi(stack.server.url, tokens[who], method, route, body);

describe("the audit trail over the API", () => {
  it("records a console correction with what changed, holds it for approval, and filters and exports", async () => {
    const sheet =
      "reference,from_account,to_account,amount,currency\nAUD-T-1,ops-checking,vendor-ach,5.13,USD\n";
    const id = await submitSheetThroughApi(stack.server.url, tokens.clerk, "audit.csv", sheet);
    await until("the row to fail", async () => {
      const r = await call("clerk", "GET", `/api/v1/batches/${id}/rows/2`);
      return r.json.state === "failed" ? true : undefined;
    });

    // 900,000.00 to another payee on a batch that needed no approval: held, nothing sent.
    const corrected = await call("clerk", "POST", `/api/v1/batches/${id}/rows/2/correct`, {
      amount: "900000.00",
      to_account: "vendor-ach-2",
    });
    expect(corrected.status, corrected.text).toBe(200);
    expect(corrected.json).toMatchObject({ row: 2, outcome: "held", attempt: null });
    expect(corrected.json.changes).toEqual([
      { field: "amount", old: "5.13", new: "900000.00" },
      { field: "to_account", old: "vendor-ach", new: "vendor-ach-2" },
    ]);
    expect((await call("clerk", "GET", `/api/v1/batches/${id}/rows/2`)).json).toMatchObject({
      state: "failed",
      attempt: 1,
    });
    const approval = (await call("clerk", "GET", `/api/v1/batches/${id}/approval`)).json.approval;
    expect(approval).toMatchObject({
      status: "awaiting-approval",
      heldFor: "correction",
      submittedBy: "clerk",
      corrections: [{ row: 2, by: "clerk", via: "console" }],
    });
    // The corrector cannot approve it; another approver can, and the corrected row is paid.
    const approved = await call("ann", "POST", `/api/v1/batches/${id}/approve`);
    expect(approved.json.outcome).toBe("approved");
    await until("the corrected row's new attempt", async () => {
      const r = await call("clerk", "GET", `/api/v1/batches/${id}/rows/2`);
      return r.json.attempt === 2 && r.json.state === "completed" ? r.json : undefined;
    });

    // Filters: by batch, by actor, by action (a first part covers every `rows.*`).
    const byBatch = (await call("root", "GET", `/api/v1/audit?batch=${id}`)).json.data as Json[];
    expect(byBatch.map((e) => e.action).sort()).toEqual(
      ["batch.approve", "batch.submit", "rows.correct", "rows.hold"].sort(),
    );
    expect(byBatch.every((e) => e.target === id || String(e.target).startsWith(`${id}/`))).toBe(true);
    const correction = byBatch.find((e) => e.action === "rows.correct");
    expect(correction).toMatchObject({
      actor: { kind: "token", name: "clerk" },
      target: `${id}/2`,
      detail: {
        via: "console",
        held: 1,
        changes: expect.arrayContaining([
          { row: 2, field: "amount", old: "5.13", new: "900000.00" },
          { row: 2, field: "to_account", old: "vendor-ach", new: "vendor-ach-2" },
        ]),
      },
    });
    const clerkRows = (await call("root", "GET", `/api/v1/audit?actor=clerk&action=rows&batch=${id}`)).json
      .data as Json[];
    expect(clerkRows.map((e) => e.action).sort()).toEqual(["rows.correct", "rows.hold"]);
    const none = await call("root", "GET", `/api/v1/audit?actor=nobody-at-all`);
    expect(none.json).toEqual({ data: [], nextCursor: null });
    expect((await call("clerk", "GET", "/api/v1/audit")).status).toBe(403);

    // The CSV export: same filters, one line per entry, newest first, cells safe in a spreadsheet.
    await new AuditTrail(stack.server.redis, stack.prefix).record({
      actor: { kind: "user", name: "=HYPERLINK(evil)" },
      action: "rows.correct",
      target: `${id}/2`,
      from: "203.0.113.9",
      outcome: "denied",
    });
    const csv = await call("root", "GET", `/api/v1/audit.csv?batch=${id}`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toContain("text/csv");
    const lines = csv.text
      .replace(/^\uFEFF/, "")
      .trimEnd()
      .split("\r\n");
    expect(lines[0]).toBe("id,at,actor_kind,actor,role,action,target,from,outcome,detail");
    expect(lines).toHaveLength(1 + byBatch.length + 1);
    expect(lines[1]).toContain("'=HYPERLINK(evil)");
    expect(lines.some((l) => l.includes("rows.correct") && l.includes("900000.00"))).toBe(true);
    const onlyHolds = await call("root", "GET", `/api/v1/audit.csv?batch=${id}&action=rows.hold`);
    expect(onlyHolds.text.trimEnd().split("\r\n")).toHaveLength(2);
  });
});
