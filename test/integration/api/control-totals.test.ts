/**
 * Control totals through the API, as the console sends them: an upload ending with a total row is
 * checked against its valid rows (not read as a payout); totals declared with the upload (or on
 * submit) that do not match refuse the sheet with both figures, and nothing is queued.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiStack, callApi, type Json, startApiStack, withBearer } from "../../support/api-stack.js";

let stack: ApiStack;
let token: string;

const call = (method: string, route: string, body?: unknown) =>
  callApi(stack.server.url, token, method, route, body);

async function upload(name: string, lines: string[], fields: Record<string, string> = {}) {
  const form = new FormData();
  form.append("file", new Blob([`${lines.join("\n")}\n`]), name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(
    `${stack.server.url}/api/v1/sheets`,
    withBearer(token, { method: "POST", body: form }),
  );
  return { status: res.status, json: (await res.json()) as Json };
}

beforeAll(async () => {
  stack = await startApiStack({ label: "control-totals", clock: { toInProgressMs: 100, toFinalMs: 150 } });
  token = (await stack.server.auth.createToken("t-control", "submitter", "test")).token;
});

afterAll(async () => {
  await stack?.close();
});

const rows = (tag: string) => [
  "reference,from_account,to_account,amount,currency",
  `${tag}-1,ops-checking,vendor-ach,1250.00,USD`,
  `${tag}-2,ops-checking,vendor-ach,250.50,USD`,
];

describe("control totals in the API", () => {
  it("an upload ending with a matching total row has only its payout rows, and is submitted", async () => {
    const u = await upload("with-total.csv", [...rows("APICT-A"), "Total,,,1500.50,USD"]);
    expect(u.status).toBe(201);
    expect(u.json).toMatchObject({ rows: 2, validRows: 2, invalidRows: 0, problemCount: 0 });
    const made = await call("POST", "/api/v1/batches", { sheetId: u.json.id });
    expect(made.status, made.text).toBe(201);
  });

  it("totals declared with the upload are shown, and a mismatch refuses the submit with both figures", async () => {
    const u = await upload("declared.csv", rows("APICT-B"), {
      expectRows: "2",
      expectTotals: "USD:125000.00",
    });
    expect(u.status).toBe(201);
    expect(u.json.declared).toEqual({ rows: 2, totals: [{ currency: "USD", amount: "125000.00" }] });
    expect(u.json.sheetProblems.map((p: Json) => p.code)).toEqual(["CONTROL_TOTAL_MISMATCH"]);
    const refused = await call("POST", "/api/v1/batches", { sheetId: u.json.id });
    expect(refused.status).toBe(422);
    expect(refused.json.error.code).toBe("CONTROL_TOTAL_MISMATCH");
    expect(refused.json.error.message).toContain("USD 125000.00");
    expect(refused.json.error.message).toContain("USD 1500.50");
    // Declared again on submit, correctly this time: the submit's figures are the ones checked.
    const ok = await call("POST", "/api/v1/batches", {
      sheetId: u.json.id,
      expectTotals: ["USD:1500.50"],
      expectRows: 2,
    });
    expect(ok.status, ok.text).toBe(201);
  });

  it("a malformed declared total is a 400 naming the field", async () => {
    const u = await upload("bad.csv", rows("APICT-C"), { expectTotals: "lots" });
    expect(u.status).toBe(400);
    expect(u.json.error.message).toContain("expectTotals");
  });
});
