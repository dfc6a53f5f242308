/** Shared set-up of the result-file tests: a batch in a real Redis, built through submitBatch. */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { Redis } from "ioredis";
import JSZip from "jszip";
import {
  BatchStore,
  type InvalidRowInput,
  type RowChange,
  type SheetLayout,
  type SubmittedInstruction,
  submitBatch,
} from "../../../src/batches/index.js";
import { deleteKeys, instruction, REDIS_URL, sha } from "../pipeline/helpers.js";

export { uniquePrefix } from "../../support/redis-keys.js";
export { deleteKeys, REDIS_URL };

export function openStore(prefix: string): { redis: Redis; store: BatchStore } {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  return { redis, store: new BatchStore(redis, { prefix }) };
}

/** Formula-looking text a user may have typed into a sheet (it must stay text in the result). */
export const FORMULA_TEXTS = ['=HYPERLINK("http://evil.example","click")', "+1", "-2", "@x"] as const;

/** The sheet as submitted: our columns, then a user's own `status` and an extra column. */
export const LAYOUT: Omit<SheetLayout, "format"> = {
  columns: ["reference", "to_account", "amount", "currency", "status", "Approver note"],
  keys: ["reference", "to_account", "amount", "currency", "status", "Approver note"],
};

export interface BuiltBatch {
  batchId: string;
  /** Row keys by role. */
  paid: string;
  fx: string;
  rejected: string;
  pending: string;
}

/**
 * Rows 2–7 of a sheet: a paid USD row (with formula-looking notes), an FX row (EUR, debit and rate
 * recorded), a rejected row, an invalid row (two problems), a row still in flight and a second
 * invalid row at the end. No job is enqueued: the test moves the rows as the workers would.
 */
export async function buildBatch(
  store: BatchStore,
  format: "csv" | "xlsx",
  dataDir: string,
): Promise<BuiltBatch> {
  const ref = (n: number) => `INV-${randomBytes(3).toString("hex")}-${n}`;
  const rows: SubmittedInstruction[] = [
    instruction({
      rowNumber: 2,
      reference: ref(2),
      amount: 125_000,
      source: {
        to_account: "acct_vendor_ach",
        amount: 1250,
        currency: "USD",
        "Approver note": FORMULA_TEXTS[0],
      },
    }),
    instruction({
      rowNumber: 3,
      reference: ref(3),
      amount: 50_000,
      currency: "EUR",
      source: { to_account: "acct_vendor_eur", amount: 500, currency: "EUR", status: FORMULA_TEXTS[1] },
    }),
    instruction({
      rowNumber: 4,
      reference: ref(4),
      source: {
        to_account: "acct_vendor_ach",
        amount: 100.01,
        currency: "USD",
        "Approver note": FORMULA_TEXTS[2],
      },
    }),
    instruction({
      rowNumber: 6,
      reference: ref(6),
      source: {
        to_account: "acct_vendor_ach",
        amount: 7,
        currency: "USD",
        "Approver note": FORMULA_TEXTS[3],
      },
    }),
  ];
  for (const r of rows) r.source = { reference: r.reference ?? "", ...r.source };
  const invalidRows: InvalidRowInput[] = [
    {
      rowNumber: 5,
      source: { reference: "INV-BAD", to_account: "acct_nobody", amount: "1,234", currency: "USD" },
      problems: [
        { column: "amount", message: "AMOUNT_AMBIGUOUS: 1,234 could be 1234 or 1.234" },
        { column: "to_account", message: "ACCOUNT_NOT_FOUND: no account acct_nobody" },
      ],
    },
    {
      rowNumber: 8,
      source: { reference: "", amount: 3, "Approver note": "=1+1" },
      problems: [{ column: "reference", message: "REFERENCE_MISSING: the reference is blank" }],
    },
  ];
  const { batchId } = await submitBatch({
    store,
    enqueuer: { enqueue: async () => undefined, backlog: async () => 0 },
    instructions: rows,
    invalidRows,
    fileSha256: sha(),
    sourceName: `payroll run.${format}`,
    entityId: "me",
    dataDir,
    sheet: { ...LAYOUT, format },
  });
  const [paid, fx, rejected, pending] = rows.map((r) => r.rowKey) as [string, string, string, string];
  const move = async (rowKey: string, change: RowChange) => {
    const result = await store.changeRow(batchId, rowKey, change);
    if (result.outcome !== "ok") throw new Error(`row ${rowKey}: ${result.outcome}`);
  };
  await move(paid, { to: "submitted", fields: { paymentId: "pay_paid1", paymentStatus: "scheduled" } });
  await move(paid, { to: "completed", fields: { paymentStatus: "completed" } });
  await move(fx, {
    to: "in-progress",
    fields: { paymentId: "pay_fx1", paymentStatus: "in-progress", debitUsd: 54_321, fxRate: 0.9205 },
  });
  await move(rejected, {
    to: "rejected",
    fields: { errorCode: "ACCOUNT_NOT_VERIFIED", errorMessage: "the paying account is not verified" },
  });
  await move(pending, { to: "submitted", fields: { paymentId: "pay_pending1", paymentStatus: "scheduled" } });
  return { batchId, paid, fx, rejected, pending };
}

/** The cells of the first worksheet, straight from the XML: address → {type attribute, value, formula?}. */
export async function xlsxCells(
  file: string,
): Promise<Map<string, { t: string | undefined; value: string; hasFormula: boolean }>> {
  const zip = await JSZip.loadAsync(await readFile(file));
  const sheet = zip.file("xl/worksheets/sheet1.xml");
  if (!sheet) throw new Error("no xl/worksheets/sheet1.xml");
  const xml = await sheet.async("string");
  const shared: string[] = [];
  const sst = zip.file("xl/sharedStrings.xml");
  if (sst) {
    for (const si of (await sst.async("string")).matchAll(/<si>(.*?)<\/si>/gs)) {
      shared.push([...(si[1] ?? "").matchAll(/<t[^>]*>(.*?)<\/t>/gs)].map((m) => m[1]).join(""));
    }
  }
  const cells = new Map<string, { t: string | undefined; value: string; hasFormula: boolean }>();
  for (const m of xml.matchAll(/<c r="([A-Z]+\d+)"([^>]*?)(?:\/>|>(.*?)<\/c>)/gs)) {
    const [, address, attrs, inner = ""] = m;
    const t = /\st="([^"]+)"/.exec(attrs ?? "")?.[1];
    let value = "";
    if (t === "inlineStr") value = [...inner.matchAll(/<t[^>]*>(.*?)<\/t>/gs)].map((x) => x[1]).join("");
    else {
      const v = /<v>(.*?)<\/v>/s.exec(inner)?.[1] ?? "";
      value = t === "s" ? (shared[Number(v)] ?? "") : v;
    }
    cells.set(address!, { t, value: unescapeXml(value), hasFormula: /<f[\s>]/.test(inner) });
  }
  return cells;
}

function unescapeXml(text: string): string {
  return text
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&apos;", "'")
    .replaceAll("&amp;", "&");
}
