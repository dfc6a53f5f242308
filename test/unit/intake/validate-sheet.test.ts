/**
 * validateSheet hands rows out in sheet order, whichever of them wait for I/O (an attachment file on
 * disk, the service's eligibility tool) and however long that takes. A real CSV in a temporary folder,
 * live data built from fixed accounts, and a stand-in for the eligibility tool whose answers arrive out
 * of order.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildLiveContext } from "../../../src/intake/live-context.js";
import { type IntakeApi, type ValidatedRow, validateSheet } from "../../../src/intake/validate-sheet.js";
import type {
  FastPaymentEligibility,
  FastPaymentEligibilityRequest,
} from "../../../src/payouts-api/wire-types.js";
import { account } from "./live-accounts.js";

const live = buildLiveContext(
  [account("ops-checking", "internal", "ach"), account("vendor-ach", "external", "ach")],
  { capabilities: [{ operation: "payment.domestic:write", allowed: true, reasons: [] }] },
);

/**
 * The eligibility tool: same-day-ach answers late and eligible, rtp answers at once and not eligible, so
 * answers arrive in another order than the rows asked. `fail` makes every call reject instead.
 */
function eligibilityApi(options: { fail?: boolean } = {}): IntakeApi & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    accounts: {
      listAll: () => {
        throw new Error("live data is given to validateSheet; accounts are not listed");
      },
    },
    limitations: { get: () => Promise.reject(new Error("live data is given; limitations are not read")) },
    tools: {
      fastPaymentEligibility: async (
        body: FastPaymentEligibilityRequest,
      ): Promise<FastPaymentEligibility> => {
        calls.push(body.deliveryPreference);
        if (options.fail) throw new Error("eligibility tool unavailable");
        const late = body.deliveryPreference === "same-day-ach";
        await new Promise((resolve) => setTimeout(resolve, late ? 40 : 1));
        return late
          ? { eligible: true, reasons: [] }
          : { eligible: false, reasons: [{ code: "AMOUNT_ABOVE_LIMIT", message: "too much for rtp" }] };
      },
    },
  };
}

const HEADER = "reference,from_account,to_account,amount,currency,delivery,attachment";
/**
 * Sheet rows 2..15: plain rows between rows that wait for a file check or the eligibility tool, each
 * paying its own amount (the same payment twice would be a possible duplicate).
 */
const LINES = [
  "P-01,ops-checking,vendor-ach,11.00,USD,,", //                       2 no I/O
  "P-02,ops-checking,vendor-ach,12.00,USD,same-day-ach,", //           3 eligibility (late, eligible)
  "P-03,ops-checking,vendor-ach,13.00,USD,,", //                       4 no I/O
  "P-04,ops-checking,vendor-ach,14.00,USD,,invoice.pdf", //            5 attachment on disk
  "P-05,ops-checking,vendor-ach,15.00,USD,rtp,", //                    6 eligibility (at once, refused)
  "P-06,ops-checking,vendor-ach,16.00,USD,,missing.pdf", //            7 attachment not on disk
  "P-07,ops-checking,vendor-ach,17.00,USD,,", //                       8 no I/O
  "P-08,ops-checking,vendor-ach,abc,USD,,", //                         9 invalid, no I/O
  "P-09,ops-checking,vendor-ach,18.00,USD,,", //                      10 no I/O
  "P-01,ops-checking,vendor-ach,19.00,USD,same-day-ach,", //          11 duplicate: no eligibility call
  "P-11,ops-checking,vendor-ach,20.00,USD,,", //                      12 no I/O
  "P-12,ops-checking,vendor-ach,21.00,USD,same-day-ach,", //          13 eligibility (late, eligible)
  "P-13,ops-checking,vendor-ach,22.00,USD,,", //                      14 no I/O
  "P-14,ops-checking,vendor-ach,23.00,USD,,", //                      15 no I/O
];
const EXPECTED: Array<[number, string[]]> = [
  [2, []],
  [3, []],
  [4, []],
  [5, []],
  [6, ["DELIVERY_NOT_ELIGIBLE"]],
  [7, ["ATTACHMENT_NOT_FOUND"]],
  [8, []],
  [9, ["AMOUNT_INVALID"]],
  [10, []],
  [11, ["REFERENCE_DUPLICATE"]],
  [12, []],
  [13, []],
  [14, []],
  [15, []],
];

let dir: string;
let sheetPath: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "validate-sheet-"));
  sheetPath = path.join(dir, "payouts.csv");
  await writeFile(sheetPath, `${[HEADER, ...LINES].join("\n")}\n`);
  await writeFile(path.join(dir, "invoice.pdf"), "%PDF-1.4\n%%EOF\n");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function readAll(rows: AsyncIterable<ValidatedRow>): Promise<Array<[number, string[], boolean]>> {
  const out: Array<[number, string[], boolean]> = [];
  for await (const v of rows) out.push([v.row.rowNumber, v.problems.map((p) => p.code), !!v.instruction]);
  return out;
}

describe("validateSheet", () => {
  it.each([1, 2, 3, 256])(
    "hands rows out in sheet order with their verdicts (chunkSize %d)",
    async (chunkSize) => {
      const api = eligibilityApi();
      const validation = await validateSheet(sheetPath, { api, live, chunkSize });
      const rows = await readAll(validation.rows);
      expect(rows).toEqual(EXPECTED.map(([row, codes]) => [row, codes, codes.length === 0]));
      // Rows 3, 6 and 13 ask the tool; row 11 repeats a reference, so asking would be wasted.
      expect(api.calls.sort()).toEqual(["rtp", "same-day-ach", "same-day-ach"]);
    },
  );

  it("a reader that stops part way returns only once every duplicate look-up under way has ended", async () => {
    // Each look-up records its rows in the index (a claim): the submission takes the claim back when
    // the sheet is not submitted, which must come after the last look-up, never before it.
    let started = 0;
    let ended = 0;
    const index = {
      matches: async () => {
        started++;
        await new Promise((resolve) => setTimeout(resolve, 30));
        ended++;
        return new Map();
      },
    };
    const validation = await validateSheet(sheetPath, {
      api: eligibilityApi(),
      live,
      chunkSize: 2,
      duplicates: { index, allow: false },
    });
    for await (const v of validation.rows) {
      expect(v.row.rowNumber).toBe(2);
      break;
    }
    // The next chunk's look-up was sent while the first was answered, and it has ended too.
    expect(started).toBeGreaterThanOrEqual(2);
    expect(ended).toBe(started);
  });

  it("names the attachment file of a valid row", async () => {
    const validation = await validateSheet(sheetPath, { api: eligibilityApi(), live });
    for await (const v of validation.rows) {
      if (v.row.rowNumber !== 5) continue;
      expect(v.instruction?.attachment).toEqual({ kind: "file", path: path.join(dir, "invoice.pdf") });
    }
  });

  it("surfaces a failing eligibility call to the reader of the rows, in order", async () => {
    const validation = await validateSheet(sheetPath, { api: eligibilityApi({ fail: true }), live });
    const seen: number[] = [];
    const reading = (async () => {
      for await (const v of validation.rows) seen.push(v.row.rowNumber);
    })();
    await expect(reading).rejects.toThrow("eligibility tool unavailable");
    // Row 2 needs no I/O and comes before the failing row 3; nothing after row 3 is handed out.
    expect(seen).toEqual([2]);
  });
});
