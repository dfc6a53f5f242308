/**
 * The OpenAPI description is the API's contract: generated from the routes' own schemas, it lists
 * every /api/v1 route, and every answer a route gives (successes and errors) matches the schema the
 * description states for it. Each operation of the description is called here (a table below says
 * how); an operation without a way to call it fails the test, so a new route cannot go unchecked.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REFERENCE_START, renderApiReference } from "../../../src/api/api-reference.js";
import {
  type ApiStack,
  callApi,
  type Json,
  startApiStack,
  until,
  uploadSheet,
} from "../../support/api-stack.js";

let stack: ApiStack;
let token: string;
let doc: Json;
const seen: { op: string; status: number }[] = [];

const SHEET = [
  "reference,from_account,to_account,amount,currency",
  "OAS-FAIL-1,ops-checking,vendor-ach,100.13,USD",
  "OAS-OK-2,ops-checking,vendor-ach,100.00,USD",
  "OAS-BAD-3,ops-checking,nobody,12.00,USD",
].join("\n");

/** Operations whose routes are still to be converted to the schema style (owned by another change). */
const NOT_YET_DESCRIBED = new Set<string>([]);

beforeAll(async () => {
  stack = await startApiStack({
    label: "openapi",
    clock: { toInProgressMs: 100, toFinalMs: 150 },
    reconcile: { sweepEveryMs: 300, staleAfterMs: 100 },
  });
  token = (await stack.server.auth.createToken("t-openapi", "admin", "test")).token;
  const res = await fetch(`${stack.server.url}/api/v1/openapi.json`);
  expect(res.status).toBe(200);
  doc = await res.json();
});

afterAll(async () => {
  await stack?.close();
});

function validatorFor(op: string, status: number) {
  const [method, route] = op.split(" ") as [string, string];
  const responses = doc.paths[route]?.[method.toLowerCase()]?.responses;
  const content = responses?.[String(status)]?.content;
  if (!content) return undefined;
  const pointer = [
    "paths",
    route,
    method.toLowerCase(),
    "responses",
    String(status),
    "content",
    "application/json",
    "schema",
  ]
    .map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1"))
    .join("/");
  return ajv.compile({ $ref: `openapi#/${pointer}` });
}

let ajv: InstanceType<typeof Ajv2020>;

/** Calls `route` (a concrete path) as the operation `op`, and checks the answer against the description. */
async function check(op: string, route: string, init: { method?: string; body?: unknown } = {}) {
  const method = init.method ?? op.split(" ")[0]!;
  const res = await callApi(stack.server.url, token, method, route, init.body);
  seen.push({ op, status: res.status });
  const validate = validatorFor(op, res.status);
  expect(validate, `${op} answered ${res.status}, which the description does not list`).toBeDefined();
  const ok = validate!(res.json);
  expect(ok, `${op} ${res.status}: ${JSON.stringify(validate!.errors)} in ${res.text.slice(0, 300)}`).toBe(
    true,
  );
  return res;
}

describe("the OpenAPI description", () => {
  it("is OpenAPI 3.1 and describes every /api/v1 route with its answers", () => {
    expect(doc.openapi).toBe("3.1.0");
    ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ ...doc, $id: "openapi" });
    const ops = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([p, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(ops.every((o) => o.split(" ")[1]!.startsWith("/api/v1/"))).toBe(true);
    expect(ops).toEqual(expect.arrayContaining(["GET /api/v1/batches/{id}/rows", "POST /api/v1/sheets"]));
    for (const op of ops) {
      if (NOT_YET_DESCRIBED.has(op)) continue;
      const [method, route] = op.split(" ") as [string, string];
      const responses = doc.paths[route][method.toLowerCase()].responses ?? {};
      const success = Object.keys(responses).filter((s) => s.startsWith("2"));
      expect(success, `${op} states no success answer`).not.toEqual([]);
    }
    expect(doc.paths["/api/v1/sheets"].post.requestBody.content["multipart/form-data"]).toBeDefined();
  });

  it("matches every answer of every route", { timeout: 60_000 }, async () => {
    const u = stack.server.url;
    const up = await uploadSheet(u, token, "openapi.csv", SHEET);
    expect(up.status).toBe(201);
    seen.push({ op: "POST /api/v1/sheets", status: 201 });
    expect(validatorFor("POST /api/v1/sheets", 201)!(up.json)).toBe(true);
    const sheetId = up.json.id as string;
    await check("GET /api/v1/sheets/{id}", `/api/v1/sheets/${sheetId}`);
    await check("GET /api/v1/sheets/{id}", "/api/v1/sheets/upl_00000000000000000000");
    const report = await callApi(u, token, "GET", `/api/v1/sheets/${sheetId}/report.csv`);
    expect(report.status).toBe(200);
    seen.push({ op: "GET /api/v1/sheets/{id}/report.{format}", status: 200 });

    await check("GET /api/v1/sheets/{id}/rows", `/api/v1/sheets/${sheetId}/rows?problems=only`);
    await check("GET /api/v1/sheets/{id}/rows", `/api/v1/sheets/${sheetId}/rows?problems=sometimes`);
    await check("PUT /api/v1/sheets/{id}/mapping", `/api/v1/sheets/${sheetId}/mapping`, {
      body: { columns: { amount: "no such header" } },
    });
    await check("PUT /api/v1/sheets/{id}/mapping", `/api/v1/sheets/${sheetId}/mapping`, {
      body: { columns: { amount: "amount" } },
    });
    const template = await callApi(u, token, "GET", "/api/v1/template.csv");
    expect(template.text).toContain("reference");
    seen.push({ op: "GET /api/v1/template.{format}", status: template.status });
    await check("POST /api/v1/batches", "/api/v1/batches", { body: { sheetId, onInvalid: "reject" } });
    await check("PATCH /api/v1/sheets/{id}/rows", `/api/v1/sheets/${sheetId}/rows`, {
      body: { rows: [{ row: 4, cells: { to_account: "vendor-ach" } }] },
    });
    await check("PATCH /api/v1/sheets/{id}/rows", `/api/v1/sheets/${sheetId}/rows`, {
      body: { rows: [{ row: 4, cells: { nope: "x" } }] },
    });
    await check("POST /api/v1/batches", "/api/v1/batches", { body: { sheetId: 7 } });
    const made = await check("POST /api/v1/batches", "/api/v1/batches", {
      body: { sheetId, onInvalid: "skip" },
    });
    const id = made.json.id as string;
    await until(
      "the batch to finish",
      async () =>
        (await callApi(u, token, "GET", `/api/v1/batches/${id}`)).json.state === "finished"
          ? true
          : undefined,
      30_000,
    );

    await check("GET /api/v1/batches", "/api/v1/batches?limit=5");
    await check("GET /api/v1/batches", "/api/v1/batches?limit=0");
    await check("GET /api/v1/batches/{id}", `/api/v1/batches/${id}`);
    await check("GET /api/v1/batches/{id}", "/api/v1/batches/nope");
    for (const q of [
      "",
      "?offset=1&limit=1",
      "?state=failed",
      "?q=oas-ok",
      "?q=100.13",
      "?state=invalid",
      "?state=nope",
    ]) {
      await check("GET /api/v1/batches/{id}/rows", `/api/v1/batches/${id}/rows${q}`);
    }
    await check("GET /api/v1/batches/{id}/rows/{row}", `/api/v1/batches/${id}/rows/2`);
    await check("GET /api/v1/batches/{id}/rows/{row}", `/api/v1/batches/${id}/rows/99`);
    await check("POST /api/v1/batches/{id}/rows/{row}/cancel", `/api/v1/batches/${id}/rows/3`);
    await check("POST /api/v1/batches/{id}/retry", `/api/v1/batches/${id}/retry`, { body: { rows: [2] } });
    await check("POST /api/v1/batches/{id}/retry", `/api/v1/batches/${id}/retry`, { body: { rows: ["x"] } });
    await check("GET /api/v1/batches/{id}/audit", `/api/v1/batches/${id}/audit?limit=5`);
    await check("GET /api/v1/batches/{id}/audit", "/api/v1/batches/b20990101T000000-00000000/audit");
    await check("GET /api/v1/batches/{id}/audit", `/api/v1/batches/${id}/audit?limit=0`);
    await check("POST /api/v1/batches/{id}/rows/{row}/correct", `/api/v1/batches/${id}/rows/2/correct`, {
      body: { amount: "100.00" },
    });
    await check("POST /api/v1/batches/{id}/rows/{row}/correct", `/api/v1/batches/${id}/rows/99/correct`, {
      body: { amount: "1.00" },
    });
    await check("POST /api/v1/batches/{id}/rows/{row}/correct", `/api/v1/batches/${id}/rows/2/correct`, {
      body: {},
    });
    await check("GET /api/v1/audit", "/api/v1/audit?limit=5");
    await check("GET /api/v1/audit", `/api/v1/audit?batch=${id}&action=batch&actor=t-openapi`);
    await check("GET /api/v1/audit", "/api/v1/audit?limit=0");
    const auditCsv = await callApi(u, token, "GET", `/api/v1/audit.csv?batch=${id}`);
    expect(auditCsv.status).toBe(200);
    seen.push({ op: "GET /api/v1/audit.csv", status: 200 });
    const result = await callApi(u, token, "GET", `/api/v1/batches/${id}/result.csv`);
    expect(result.status).toBe(200);
    seen.push({ op: "GET /api/v1/batches/{id}/result.{format}", status: 200 });

    await check("GET /api/v1/batches/{id}/approval", `/api/v1/batches/${id}/approval`);
    await check("POST /api/v1/batches/{id}/approve", `/api/v1/batches/${id}/approve`);
    await check("POST /api/v1/batches/{id}/reject", `/api/v1/batches/${id}/reject`, {
      body: { reason: "no" },
    });
    await check("POST /api/v1/batches/{id}/reject", `/api/v1/batches/${id}/reject`, { body: {} });
    // A finished batch has nothing left to stop: 409; an unknown one 404.
    await check("POST /api/v1/batches/{id}/pause", `/api/v1/batches/${id}/pause`, {
      body: { reason: "look" },
    });
    await check("POST /api/v1/batches/{id}/pause", "/api/v1/batches/b20990101T000000-00000000/pause");
    await check("POST /api/v1/batches/{id}/resume", `/api/v1/batches/${id}/resume`);
    await check("POST /api/v1/batches/{id}/cancel", `/api/v1/batches/${id}/cancel`);

    await check("GET /api/v1/csrf", "/api/v1/csrf");
    await check("GET /api/v1/session", "/api/v1/session");
    await check("POST /api/v1/session", "/api/v1/session", { body: { name: "x", password: "y" } });
    await check("DELETE /api/v1/session", "/api/v1/session");

    const events = await fetch(`${u}/api/v1/events`, { headers: { authorization: `Bearer ${token}` } });
    expect(events.headers.get("content-type")).toContain("text/event-stream");
    await events.body?.cancel();
    seen.push({ op: "GET /api/v1/events", status: 200 });

    // Every operation of the description was called (and its answers checked above).
    const called = new Set(seen.map((s) => s.op));
    const ops = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([p, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`),
    );
    const missing = ops.filter((o) => !called.has(o) && !NOT_YET_DESCRIBED.has(o));
    expect(missing, "operations this test does not call yet: add them").toEqual([]);
  });

  it("is what docs/api.md shows as the reference (WRITE_API_DOCS=1 rewrites it)", async () => {
    const file = path.resolve("docs/api.md");
    const page = await readFile(file, "utf8");
    const at = page.indexOf(REFERENCE_START);
    expect(at, "docs/api.md keeps its reference marker").toBeGreaterThan(0);
    // The version changes with every release; the reference is the same for it.
    const reference = renderApiReference({ ...doc, info: { ...doc.info, version: "x" } });
    const current = `${page.slice(0, at + REFERENCE_START.length)}\n\n${reference}`;
    if (process.env.WRITE_API_DOCS === "1") await writeFile(file, current);
    expect(page).toBe(current);
  });
});
