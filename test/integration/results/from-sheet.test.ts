/**
 * The whole way a user gets a result file: an XLSX sheet (with extra columns and formula-looking
 * text) submitted through submitSheet against the sandbox, paid by the real payment worker, then
 * the result written and read back by our reader and by the raw sheet XML.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import ExcelJS from "exceljs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPayoutsClient, type PayoutsClient } from "../../../src/payouts-api/index.js";
import { RESULT_COLUMNS, writeResultFile } from "../../../src/results/index.js";
import { openSheet, type SheetRow } from "../../../src/sheets/index.js";
import { submitSheet } from "../../../src/submission/index.js";
import { PIPELINE_DEFAULTS } from "../../support/settings.js";
import { type PipelineHarness, pipelineHarness, REDIS_URL, waitForRows } from "../pipeline/helpers.js";
import { xlsxCells } from "./helpers.js";

const COLUMNS = ["reference", "Approver", "from_account", "to_account", "amount", "currency", "Cost Centre"];
const FORMULA = '=HYPERLINK("http://evil.example","click")';

let sandbox: RunningSandbox;
let client: PayoutsClient;
let h: PipelineHarness;
let sheetDir: string;
let resultPath: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, clock: { toInProgressMs: 600_000, toFinalMs: 600_000 } });
  client = createPayoutsClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: sandbox.entityId });
  h = await pipelineHarness(sandbox, "results-sheet");
  sheetDir = await mkdtemp(path.join(tmpdir(), "payouts-result-sheet-"));
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet("Payouts");
  ws.addRow(COLUMNS);
  const ref = `R${Date.now().toString(36)}`;
  ws.addRow([`${ref}-1`, FORMULA, "ops-checking", "vendor-ach", 1250, "USD", "+1"]);
  ws.addRow([`${ref}-2`, "@x", "ops-checking", "vendor-acme", 50, "USD", "CC-410"]);
  ws.addRow([`${ref}-3`, "-2", "ops-checking", "supplier-eur", 4200, "EUR", "CC-300"]);
  const sheetPath = path.join(sheetDir, "april.xlsx");
  await wb.xlsx.writeFile(sheetPath);

  const outcome = await submitSheet({
    sheetPath,
    api: client,
    pipeline: { ...PIPELINE_DEFAULTS, redisUrl: REDIS_URL, prefix: h.prefix, dataDir: h.dataDir },
    entityId: "me",
    onInvalid: "skip",
  });
  if (outcome.kind !== "submitted") throw new Error(`not submitted: ${outcome.kind}`);
  await h.startWorker();
  await waitForRows(h.store, outcome.batchId);
  resultPath = (await writeResultFile(h.store, outcome.batchId, { dataDir: h.dataDir })).path;
});

afterAll(async () => {
  await h?.close();
  await client?.close();
  await sandbox?.close();
  await rm(sheetDir, { recursive: true, force: true });
});

describe("a submitted XLSX sheet's result file", () => {
  it("is an XLSX with every sheet column in order, then the result columns", async () => {
    expect(resultPath.endsWith(".result.xlsx")).toBe(true);
    const sheet = await openSheet(resultPath);
    expect(sheet.header.columns.map((c) => c.original)).toEqual([...COLUMNS, ...RESULT_COLUMNS]);
  });

  it("shows each row's outcome in sheet order: paid, invalid with its problem, FX with debit and rate", async () => {
    const sheet = await openSheet(resultPath);
    const rows: SheetRow[] = [];
    for await (const row of sheet.rows) rows.push(row);
    expect(rows.map((r) => r.rowNumber)).toEqual([2, 3, 4]);
    const cell = (r: number, name: string) => {
      const column = sheet.header.columns.find((c) => c.original === name)!;
      return rows[r]!.cells[column.key]!;
    };
    expect(cell(0, "status").text).toBe("submitted");
    expect(cell(0, "payment_id").text).toMatch(/^pay_/);
    expect(cell(0, "amount")).toMatchObject({ kind: "number", number: 1250 });
    expect(cell(0, "attempt")).toMatchObject({ kind: "number", number: 1 });
    expect(cell(0, "idempotency_key").text).toMatch(/^[0-9a-f-]{36}$/);

    expect(cell(1, "status").text).toBe("invalid");
    expect(cell(1, "error_code").text).toBe("TO_ACCOUNT_NOT_FOUND");
    expect(cell(1, "error_message").text).toContain("vendor-acme");
    expect(cell(1, "idempotency_key").kind).toBe("empty");

    expect(cell(2, "currency").text).toBe("EUR");
    expect(cell(2, "debit_usd").kind).toBe("number");
    expect(cell(2, "debit_usd").number).toBeGreaterThan(0);
    expect(cell(2, "fx_rate").kind).toBe("number");
    expect(cell(2, "fx_rate").number).toBeGreaterThan(0);
  });

  it("keeps the formula-looking text of the sheet as escaped text, never a formula", async () => {
    const cells = await xlsxCells(resultPath);
    expect([...cells.values()].some((c) => c.hasFormula)).toBe(false);
    expect(cells.get("B2")).toMatchObject({ t: "inlineStr", value: `'${FORMULA}` });
    expect(cells.get("G2")).toMatchObject({ t: "inlineStr", value: "'+1" });
    expect(cells.get("B3")).toMatchObject({ t: "inlineStr", value: "'@x" });
    expect(cells.get("B4")).toMatchObject({ t: "inlineStr", value: "'-2" });
    // The amount stays a number cell.
    expect(cells.get("E2")).toMatchObject({ t: undefined, value: "1250" });
  });
});
