/**
 * Correcting before paying, over the HTTP API on a real Redis and the sandbox: an upload's rows page
 * with the problems first; a corrected row is checked again at once and the counts follow; the batch
 * submitted pays and archives the corrected sheet (row numbers as the person saw them), never the
 * original; attachment files come with the sheet (beside it, or in a .zip); a sheet with other
 * headers is mapped to ours, and the mapping is remembered for the next sheet with the same headers.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import ExcelJS from "exceljs";
import JSZip from "jszip";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ApiStack,
  callApi,
  type Json,
  startApiStack,
  until,
  withBearer,
} from "../../support/api-stack.js";

let stack: ApiStack;
let token: string;

const call = (method: string, route: string, body?: unknown) =>
  callApi(stack.server.url, token, method, route, body);

async function upload(files: { field: string; name: string; content: string | Buffer }[]): Promise<Json> {
  const form = new FormData();
  for (const f of files) form.append(f.field, new Blob([f.content]), f.name);
  const res = await fetch(
    `${stack.server.url}/api/v1/sheets`,
    withBearer(token, { method: "POST", body: form }),
  );
  const json = (await res.json()) as Json;
  expect(res.status, JSON.stringify(json)).toBe(201);
  return json;
}

beforeAll(async () => {
  stack = await startApiStack({
    label: "uploads",
    clock: { toInProgressMs: 100, toFinalMs: 150 },
    reconcile: { sweepEveryMs: 300, staleAfterMs: 100 },
  });
  token = (await stack.server.auth.createToken("t-uploads", "submitter", "test")).token;
});

afterAll(async () => {
  await stack?.close();
});

describe("correcting an upload before paying it", () => {
  it("pages the rows with problems first, checks a corrected row at once, and pays the corrected sheet", async () => {
    const sheet = [
      "reference,from_account,to_account,amount,currency",
      "UPL-OK-1,ops-checking,vendor-ach,10.00,USD",
      "",
      "UPL-FIX-3,ops-checking,vendor-ach,ten dollars,USD",
      "UPL-OK-4,ops-checking,vendor-ach,11.00,USD",
      "UPL-FIX-5,ops-checking,nobody-at-all,12.00,USD",
    ].join("\n");
    const u = await upload([{ field: "file", name: "fix-me.csv", content: sheet }]);
    expect(u).toMatchObject({ rows: 4, validRows: 2, invalidRows: 2, editedRows: 0 });

    const first = await call("GET", `/api/v1/sheets/${u.id}/rows?limit=3`);
    expect(first.json.data.map((r: Json) => r.row)).toEqual([4, 6, 2]);
    expect(first.json).toMatchObject({ total: 4, problemRows: 2 });
    const only = await call("GET", `/api/v1/sheets/${u.id}/rows?problems=only`);
    expect(only.json.data.map((r: Json) => [r.row, r.problems[0].code])).toEqual([
      [4, "AMOUNT_INVALID"],
      [6, "TO_ACCOUNT_NOT_FOUND"],
    ]);

    // One row corrected: valid at once, counts and totals follow; another corrected wrongly stays invalid.
    const fixed = await call("PATCH", `/api/v1/sheets/${u.id}/rows`, {
      rows: [
        { row: 4, cells: { amount: "13.50" } },
        { row: 6, cells: { to_account: "still-nobody" } },
      ],
    });
    expect(fixed.status).toBe(200);
    expect(fixed.json.rows.map((r: Json) => [r.row, r.valid, r.edited])).toEqual([
      [4, true, ["amount"]],
      [6, false, ["to_account"]],
    ]);
    expect(fixed.json.upload).toMatchObject({ validRows: 3, invalidRows: 1, editedRows: 2 });
    expect(fixed.json.upload.totals).toEqual([{ currency: "USD", rows: 3, amount: "34.50" }]);
    const refused = await call("POST", "/api/v1/batches", { sheetId: u.id, onInvalid: "reject" });
    expect(refused.status).toBe(422);

    const last = await call("PATCH", `/api/v1/sheets/${u.id}/rows`, {
      rows: [{ row: 6, cells: { to_account: "vendor-ach" } }],
    });
    expect(last.json.upload).toMatchObject({ validRows: 4, invalidRows: 0 });
    const submitted = await call("POST", "/api/v1/batches", { sheetId: u.id, onInvalid: "reject" });
    expect(submitted.status).toBe(201);
    const id = submitted.json.id;

    // The rows keep the numbers the person saw, and carry the corrections.
    const row4 = await call("GET", `/api/v1/batches/${id}/rows/4`);
    expect(row4.json).toMatchObject({ reference: "UPL-FIX-3", amount: "13.50" });
    expect((await call("GET", `/api/v1/batches/${id}/rows/6`)).json.payee.account).toBe("vendor-ach");
    await until(
      "the corrected batch to finish",
      async () => ((await call("GET", `/api/v1/batches/${id}`)).json.state === "finished" ? true : undefined),
      30_000,
    );
    // The archive holds the corrected sheet, exactly what was validated and paid.
    const batch = await stack.server.redis.hget(`${stack.prefix}:batch:${id}`, "sheet");
    const archived = JSON.parse(batch!).archivedSheetPath as string;
    const text = await readFile(archived, "utf8");
    expect(text).toContain("UPL-FIX-3,ops-checking,vendor-ach,13.50,USD");
    expect(text).not.toContain("ten dollars");
    const payments = await stack.client.payments.list({ externalId: "UPL-FIX-3" });
    expect(payments.data).toHaveLength(1);
  });

  it("takes attachment files beside the sheet, or in a .zip with it", async () => {
    const csv = await readFile(path.resolve("samples/payouts-valid.csv"));
    const pdf = await readFile(path.resolve("samples/attachments/invoice-mxn-0001.pdf"));
    const alone = await upload([{ field: "file", name: "payouts-valid.csv", content: csv }]);
    const missing = await call("GET", `/api/v1/sheets/${alone.id}/rows?problems=only`);
    expect(missing.json.data.flatMap((r: Json) => r.problems.map((p: Json) => p.code))).toEqual([
      "ATTACHMENT_NOT_FOUND",
    ]);

    const beside = await upload([
      { field: "file", name: "payouts-valid.csv", content: csv },
      { field: "attachments", name: "invoice-mxn-0001.pdf", content: pdf },
    ]);
    expect(beside).toMatchObject({
      invalidRows: 0,
      attachments: ["attachments/invoice-mxn-0001.pdf", "invoice-mxn-0001.pdf"],
    });

    const zip = new JSZip();
    zip.file("april/payouts-valid.csv", csv);
    zip.file("april/attachments/invoice-mxn-0001.pdf", pdf);
    zip.file("__MACOSX/april/._payouts-valid.csv", "junk");
    const zipped = await upload([
      { field: "file", name: "april.zip", content: await zip.generateAsync({ type: "nodebuffer" }) },
    ]);
    expect(zipped).toMatchObject({
      fileName: "payouts-valid.csv",
      invalidRows: 0,
      attachments: ["attachments/invoice-mxn-0001.pdf"],
    });

    const evil = new JSZip();
    evil.file("sheet.csv", csv);
    evil.file("two.csv", csv);
    const form = new FormData();
    form.append("file", new Blob([await evil.generateAsync({ type: "nodebuffer" })]), "evil.zip");
    const res = await fetch(
      `${stack.server.url}/api/v1/sheets`,
      withBearer(token, { method: "POST", body: form }),
    );
    expect(res.status).toBe(422);
    expect(((await res.json()) as Json).error.message).toContain("put one sheet in it");
  });

  it("maps a sheet's own headers to ours and remembers the mapping for the same headers", async () => {
    const sheet = (ref: string) =>
      ["Rechnung;Konto;Empfaenger;Betrag;Waehrung", `${ref};ops-checking;vendor-ach;1,50;USD`].join("\n");
    const u = await upload([{ field: "file", name: "export.csv", content: sheet("MAP-1") }]);
    expect(u).toMatchObject({ needsMapping: true, rows: 0 });
    expect(u.columns).toEqual(["Rechnung", "Konto", "Empfaenger", "Betrag", "Waehrung"]);
    const mapping = {
      reference: "Rechnung",
      from_account: "Konto",
      to_account: "Empfaenger",
      amount: "Betrag",
      currency: "Waehrung",
    };
    const wrong = await call("PUT", `/api/v1/sheets/${u.id}/mapping`, { columns: { amount: "Summe" } });
    expect(wrong.status).toBe(400);
    const mapped = await call("PUT", `/api/v1/sheets/${u.id}/mapping`, { columns: mapping });
    expect(mapped.json).toMatchObject({ needsMapping: false, rows: 1, validRows: 1, mapping });
    expect(mapped.json.totals).toEqual([{ currency: "USD", rows: 1, amount: "1.50" }]);

    const again = await upload([{ field: "file", name: "export-2.csv", content: sheet("MAP-2") }]);
    expect(again).toMatchObject({ needsMapping: false, validRows: 1, mapping });
  });

  it("maps an XLSX whose header is not on row 1 and names none of our columns, as a CSV", async () => {
    // A title, a blank row, the header on row 3 in another language, then the rows.
    const workbook = async (refs: string[]) => {
      const book = new ExcelJS.Workbook();
      const ws = book.addWorksheet("Zahlungen");
      ws.getRow(1).values = ["Auszahlungen November"];
      ws.getRow(3).values = ["Beleg", "Quelle", "Zahlungsempfaenger", "Summe", "ISO"];
      refs.forEach((ref, i) => {
        ws.getRow(4 + i).values = [ref, "ops-checking", "vendor-ach", 2.5 + i, "USD"];
      });
      return Buffer.from(await book.xlsx.writeBuffer());
    };
    const u = await upload([
      { field: "file", name: "export.xlsx", content: await workbook(["MX-1", "MX-2"]) },
    ]);
    expect(u).toMatchObject({ needsMapping: true, rows: 0, format: "xlsx" });
    expect(u.columns).toEqual(["Beleg", "Quelle", "Zahlungsempfaenger", "Summe", "ISO"]);
    expect(u.sheetProblems[0].code).toBe("HEADER_NOT_FOUND");
    const mapping = {
      reference: "Beleg",
      from_account: "Quelle",
      to_account: "Zahlungsempfaenger",
      amount: "Summe",
      currency: "ISO",
    };
    const mapped = await call("PUT", `/api/v1/sheets/${u.id}/mapping`, { columns: mapping });
    expect(mapped.status, JSON.stringify(mapped.json)).toBe(200);
    expect(mapped.json).toMatchObject({ needsMapping: false, rows: 2, validRows: 2, mapping });
    expect(mapped.json.totals).toEqual([{ currency: "USD", rows: 2, amount: "6.00" }]);
    // The rows keep the numbers the person sees in the workbook (the title rows count).
    const rows = await call("GET", `/api/v1/sheets/${u.id}/rows?offset=0&limit=10`);
    expect(rows.json.data.map((r: Json) => [r.row, r.cells[0]])).toEqual([
      [4, "MX-1"],
      [5, "MX-2"],
    ]);

    // The next workbook with the same headers is mapped without asking.
    const again = await upload([{ field: "file", name: "export-2.xlsx", content: await workbook(["MX-3"]) }]);
    expect(again).toMatchObject({ needsMapping: false, rows: 1, validRows: 1, mapping });
  });
});
