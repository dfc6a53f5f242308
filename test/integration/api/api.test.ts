/**
 * The HTTP API over real HTTP: a real Redis, the sandbox, the payment worker and the reconcile sweep
 * in this process. One batch (a row that fails, one held `scheduled`, one that completes) is taken
 * through upload, submit, rows, cancel, retry and result; every route is tried without credentials
 * and with a role that may not use it.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../../src/server/index.js";
import { configureSheetLimits } from "../../../src/sheets/index.js";
import {
  type ApiStack,
  callApi,
  type Json,
  startApiStack,
  until,
  uploadSheet,
  withBearer,
} from "../../support/api-stack.js";
import { writeGiantInlineCell } from "../../unit/sheets/hostile-xlsx.js";

let stack: ApiStack;
let server: RunningServer;
let dir: string;
const tokens: Record<string, string> = {};

const SHEET = [
  "reference,from_account,to_account,amount,currency,delivery",
  "API-FAIL-1,ops-checking,vendor-ach,100.13,USD,standard-ach",
  "API-HELD-2,ops-checking,vendor-ach,100.77,USD,standard-ach",
  "API-OK-3,ops-checking,vendor-ach,100.00,USD,standard-ach",
].join("\n");

const as = (role: string, init: RequestInit = {}): RequestInit => withBearer(tokens[role], init);
const call = (role: string | null, method: string, route: string, body?: unknown) =>
  callApi(server.url, role ? tokens[role] : undefined, method, route, body);
const upload = (role: string, name: string, content: string | Buffer) =>
  uploadSheet(server.url, tokens[role], name, content);

beforeAll(async () => {
  stack = await startApiStack({
    label: "api",
    clock: { toInProgressMs: 200, toFinalMs: 300 },
    uploadLimitBytes: 64 * 1024,
    reconcile: { sweepEveryMs: 500, staleAfterMs: 200 },
  });
  ({ server, dir } = stack);
  for (const role of ["viewer", "submitter", "approver", "admin"]) {
    tokens[role] = (await server.auth.createToken(`t-${role}`, role, "test")).token;
  }
  await server.auth.addUser("clerk", "submitter", "clerk password 1");
});

afterAll(async () => {
  await stack?.close();
});

describe("who may call what", () => {
  const routes: [string, string][] = [
    ["GET", "/"],
    ["POST", "/api/v1/sheets"],
    ["GET", "/api/v1/sheets/upl_00000000000000000000"],
    ["GET", "/api/v1/batches"],
    ["POST", "/api/v1/batches"],
    ["GET", "/api/v1/batches/b1"],
    ["GET", "/api/v1/batches/b1/rows"],
    ["GET", "/api/v1/batches/b1/rows/2"],
    ["POST", "/api/v1/batches/b1/retry"],
    ["POST", "/api/v1/batches/b1/rows/2/cancel"],
    ["GET", "/api/v1/batches/b1/result.csv"],
    ["GET", "/api/v1/events"],
    ["GET", "/api/v1/audit"],
    ["GET", "/api/v1/session"],
    ["GET", "/metrics"],
    ["GET", "/admin/queues"],
  ];

  it("answers 401 UNAUTHENTICATED to every route without a session or token (the console page redirects)", async () => {
    for (const [method, route] of routes) {
      const res = await call(null, method, route);
      if (route === "/") {
        expect(res.status).toBe(303);
        continue;
      }
      expect([route, res.status]).toEqual([route, 401]);
      expect(res.json.error.code).toBe("UNAUTHENTICATED");
    }
    const bad = await fetch(`${server.url}/api/v1/batches`, {
      headers: { authorization: "Bearer pyt_not_a_token" },
    });
    expect(bad.status).toBe(401);
  });

  it("answers 403 FORBIDDEN to a role that may not do it", async () => {
    const forbidden: [string, string, string][] = [
      ["viewer", "POST", "/api/v1/sheets"],
      ["viewer", "POST", "/api/v1/batches"],
      ["approver", "POST", "/api/v1/batches/b1/retry"],
      ["viewer", "POST", "/api/v1/batches/b1/rows/2/cancel"],
      ["submitter", "GET", "/api/v1/audit"],
      ["submitter", "GET", "/admin/queues"],
    ];
    for (const [role, method, route] of forbidden) {
      const res = await call(role, method, route, method === "POST" ? {} : undefined);
      expect([role, route, res.status, res.json?.error?.code]).toEqual([role, route, 403, "FORBIDDEN"]);
    }
    const queues = await call("admin", "GET", "/admin/queues");
    expect(queues.status).toBe(200);
    // A way back to the console, and nothing loaded from another site (its web font is left out).
    expect(queues.text).toContain("Back to the console");
    expect(queues.text).not.toMatch(/href="https?:\/\//);
  });

  it("logs in with a CSRF token into an HttpOnly SameSite=Strict session, and refuses writes without the token", async () => {
    const csrfRes = await fetch(`${server.url}/api/v1/csrf`);
    const csrfCookie = csrfRes.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const { csrfToken } = (await csrfRes.json()) as { csrfToken: string };
    const login = (password: string, token?: string) =>
      fetch(`${server.url}/api/v1/session`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          cookie: csrfCookie,
          ...(token ? { "x-csrf-token": token } : {}),
        },
        body: JSON.stringify({ name: "clerk", password }),
      });
    const noCsrf = await login("clerk password 1");
    expect(noCsrf.status).toBe(403);
    expect(((await noCsrf.json()) as Json).error.code).toBe("CSRF_INVALID");
    expect((await login("wrong password", csrfToken)).status).toBe(401);
    const ok = await login("clerk password 1", csrfToken);
    expect(ok.status).toBe(200);
    const session = ok.headers.getSetCookie().find((c) => c.startsWith("payouts_session="))!;
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Strict/i);
    const cookie = `${csrfCookie}; ${session.split(";")[0]}`;
    const me = await fetch(`${server.url}/api/v1/session`, { headers: { cookie } });
    expect(await me.json()).toMatchObject({ name: "clerk", role: "submitter" });
    const page = await fetch(`${server.url}/`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const write = await fetch(`${server.url}/api/v1/batches/b1/retry`, {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: "{}",
    });
    expect(write.status).toBe(403);
    expect(((await write.json()) as Json).error.code).toBe("CSRF_INVALID");
  });
});

describe("a sheet from upload to result", () => {
  let sheetId: string;
  let batchId: string;

  it("validates an upload with problems, totals and a report, and refuses to submit it under reject", async () => {
    const mistakes = await readFile(path.resolve("samples/payouts-mistakes.csv"));
    const res = await upload("submitter", "payouts-mistakes.csv", mistakes);
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ fileName: "payouts-mistakes.csv", format: "csv" });
    expect(res.json.invalidRows).toBeGreaterThan(0);
    const rows = await call("viewer", "GET", `/api/v1/sheets/${res.json.id}/rows?problems=only`);
    expect(rows.json.total).toBe(res.json.invalidRows);
    const first = rows.json.data[0];
    expect(first.problems[0]).toEqual({
      column: expect.anything(),
      code: expect.any(String),
      message: expect.any(String),
    });
    const report = await call("viewer", "GET", `/api/v1/sheets/${res.json.id}/report.csv`);
    expect(report.status).toBe(200);
    expect(report.text).toContain(first.problems[0].code);
    const refused = await call("submitter", "POST", "/api/v1/batches", {
      sheetId: res.json.id,
      onInvalid: "reject",
    });
    expect(refused.status).toBe(422);
    expect(refused.json.error.code).toBe("ROWS_INVALID");
  });

  it("refuses a file over the upload limit and a file that is not a sheet", async () => {
    const big = await upload("submitter", "big.csv", `${SHEET}\n${"x".repeat(70 * 1024)}`);
    expect(big.status).toBe(413);
    expect(big.json.error.code).toBe("PAYLOAD_TOO_LARGE");
    const exe = await upload("submitter", "tool.exe", "MZ");
    expect(exe.status).toBe(415);
  });

  it("reads an upload in a bounded thread: a file past every other limit is refused 422 and the server goes on", async () => {
    // Limits loosened so that only the reading thread's heap bound can stop the read.
    configureSheetLimits({ maxInflateRatio: 1e9, maxRowChars: 1e9, maxCellChars: 1e9, readMaxMemoryMb: 16 });
    try {
      const file = path.join(dir, "endless-cell.xlsx");
      await writeGiantInlineCell(file, 20 * 1024 * 1024);
      const refused = await upload("submitter", "endless-cell.xlsx", await readFile(file));
      expect(refused.status).toBe(422);
      expect(refused.json.error.code).toBe("SHEET_UNREADABLE");
      expect(refused.json.error.message).toContain("SHEET_READ_MAX_MEMORY_MB");
    } finally {
      configureSheetLimits({});
    }
    const ok = await upload("submitter", "fine.csv", SHEET);
    expect(ok.status).toBe(201);
  });

  it("submits a valid upload once: 201, then 409 DUPLICATE_FILE naming the batch", async () => {
    const res = await upload("submitter", "api-test.csv", SHEET);
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      rows: 3,
      validRows: 3,
      invalidRows: 0,
      problemCount: 0,
      sheetProblems: [],
    });
    expect(res.json.totals).toEqual([{ currency: "USD", rows: 3, amount: "300.90" }]);
    sheetId = res.json.id;
    // An upload not submitted is kept a day (UPLOAD_KEEP_HOURS), its rows with it.
    const ttl = (part = "") => server.redis.ttl(`${stack.prefix}:upload:${sheetId}${part}`);
    for (const part of ["", ":rows", ":clean-rows"]) {
      expect(await ttl(part), part).toBeGreaterThan(23 * 3600);
      expect(await ttl(part), part).toBeLessThanOrEqual(24 * 3600);
    }
    const submitted = await call("submitter", "POST", "/api/v1/batches", { sheetId, onInvalid: "reject" });
    expect(submitted.status).toBe(201);
    batchId = submitted.json.id;
    // Submitted: its rows are gone; its page (and link to the batch) stays a week (UPLOAD_KEEP_SUBMITTED_DAYS).
    expect(await ttl(":rows")).toBe(-2);
    expect(await ttl()).toBeGreaterThan(6 * 86_400);
    expect(await ttl()).toBeLessThanOrEqual(7 * 86_400);
    expect(typeof submitted.json.state).toBe("string");
    const again = await call("submitter", "POST", "/api/v1/batches", { sheetId, onInvalid: "reject" });
    expect(again.status).toBe(409);
    expect(again.json.error).toMatchObject({ code: "DUPLICATE_FILE", batchId });
    const batch = await call("viewer", "GET", `/api/v1/batches/${batchId}`);
    expect(batch.json).toMatchObject({
      id: batchId,
      sourceName: "api-test.csv",
      createdBy: "t-submitter",
      rows: 3,
    });
    const list = await call("viewer", "GET", "/api/v1/batches?limit=1");
    expect(list.json.data.map((b: Json) => b.id)).toEqual([batchId]);
  });

  it("pages rows by state and search, cancels the held payment, and refuses to cancel a finished one", async () => {
    const failed = await until("the failed row", async () => {
      const r = await call("viewer", "GET", `/api/v1/batches/${batchId}/rows?state=failed`);
      return r.json.data.length === 1 ? r.json.data[0] : undefined;
    });
    expect(failed).toMatchObject({
      row: 2,
      reference: "API-FAIL-1",
      amount: "100.13",
      currency: "USD",
      state: "failed",
    });
    const held = await until("the held row's payment", async () => {
      const r = await call("viewer", "GET", `/api/v1/batches/${batchId}/rows?q=api-held`);
      return r.json.data[0]?.paymentId ? r.json.data[0] : undefined;
    });
    expect(held.row).toBe(3);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: Json = await call(
        "viewer",
        "GET",
        `/api/v1/batches/${batchId}/rows?limit=1${cursor ? `&cursor=${cursor}` : ""}`,
      );
      seen.push(...page.json.data.map((r: Json) => r.row));
      cursor = page.json.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual([2, 3, 4]);
    expect((await call("viewer", "GET", `/api/v1/batches/${batchId}/rows?state=paid`)).status).toBe(400);

    const cancel = await call("submitter", "POST", `/api/v1/batches/${batchId}/rows/3/cancel`);
    expect(cancel.status).toBe(200);
    expect(cancel.json).toMatchObject({ row: 3, paymentStatus: "canceled" });
    await until("the row canceled", async () => {
      const r = await call("viewer", "GET", `/api/v1/batches/${batchId}/rows/3`);
      return r.json.state === "canceled" ? true : undefined;
    });
    await until("the completed row", async () => {
      const r = await call("viewer", "GET", `/api/v1/batches/${batchId}/rows/4`);
      return r.json.state === "completed" ? true : undefined;
    });
    const late = await call("submitter", "POST", `/api/v1/batches/${batchId}/rows/4/cancel`);
    expect(late.status).toBe(409);
    expect(late.json.error.message).toContain("only a scheduled payment can be canceled");
    const history = await call("viewer", "GET", `/api/v1/batches/${batchId}/rows/4`);
    expect(history.json.history.map((h: Json) => h.to)).toEqual(
      expect.arrayContaining(["queued", "completed"]),
    );
    expect((await call("viewer", "GET", `/api/v1/batches/${batchId}/rows/99`)).status).toBe(404);
  });

  it("retries only the failed row, streams progress, and serves the result files", async () => {
    const events = await fetch(`${server.url}/api/v1/events`, as("viewer"));
    expect(events.headers.get("content-type")).toContain("text/event-stream");
    const reader = events.body!.getReader();
    const retry = await call("submitter", "POST", `/api/v1/batches/${batchId}/retry`, { rows: [2, 4] });
    expect(retry.status).toBe(200);
    expect(retry.json.retried).toEqual([2]);
    expect(retry.json.leftAlone).toEqual([{ row: 4, reason: expect.stringContaining("completed") }]);
    let text = "";
    const decoder = new TextDecoder();
    while (!text.includes(`"id":"${batchId}"`)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    await reader.cancel();
    expect(text).toContain("event: batch");
    await until("the retried row final", async () => {
      const r = await call("viewer", "GET", `/api/v1/batches/${batchId}/rows/2`);
      return r.json.attempt === 2 && r.json.state === "failed" ? true : undefined;
    });
    const csv = await call("viewer", "GET", `/api/v1/batches/${batchId}/result.csv`);
    expect(csv.status).toBe(200);
    expect(csv.text).toContain("API-OK-3");
    const xlsx = await fetch(`${server.url}/api/v1/batches/${batchId}/result.xlsx`, as("viewer"));
    expect(xlsx.status).toBe(200);
    expect(
      Buffer.from(await xlsx.arrayBuffer())
        .subarray(0, 2)
        .toString(),
    ).toBe("PK");
  });

  it("keeps every action in the audit trail and counts requests, queues and rows in /metrics", async () => {
    const audit = await call("admin", "GET", "/api/v1/audit?limit=100");
    const actions = audit.json.data.map((e: Json) => `${e.action}:${e.outcome}`);
    expect(actions).toEqual(
      expect.arrayContaining([
        "sheet.upload:ok",
        "batch.submit:ok",
        "batch.submit:denied",
        "row.cancel:ok",
        "row.cancel:denied",
        "rows.retry:ok",
        "login:ok",
        "login:denied",
      ]),
    );
    const entry = audit.json.data.find((e: Json) => e.action === "rows.retry");
    expect(entry).toMatchObject({
      actor: { kind: "token", name: "t-submitter", role: "submitter" },
      target: batchId,
      from: "127.0.0.1",
    });
    const metrics = await call("viewer", "GET", "/metrics");
    expect(metrics.text).toContain("payouts_process_cpu_seconds_total");
    expect(metrics.text).toMatch(
      /payouts_http_request_duration_seconds_count\{method="POST",route="\/api\/v1\/sheets",status="201"\} [1-9]/,
    );
    expect(metrics.text).toMatch(/payouts_queue_jobs\{queue="payments",state="waiting"\}/);
    expect(metrics.text).toContain("payouts_rows{state=");
  });

  it("rate-limits log-ins per client address", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await call(null, "POST", "/api/v1/session", { name: "clerk", password: "guess" });
      statuses.push(res.status);
    }
    expect(statuses).toContain(429);
  });
});
