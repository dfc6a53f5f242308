/**
 * `payouts validate` as a user runs it: the built binary in a child process, against the built-in
 * sandbox, with the exit codes and report files the README promises.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOSTILE_FILES, writeDtdWorkbook, writeGiantInlineCell } from "../../unit/sheets/hostile-xlsx.js";

const run = promisify(execFile);
const BIN = path.resolve("bin/payouts.js");

async function payouts(args: string[], env: NodeJS.ProcessEnv = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH, LOG_LEVEL: "silent", ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "payouts-validate-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("payouts validate", () => {
  it("exits 0 and writes an empty report for the valid sample", async () => {
    const report = path.join(dir, "valid.csv");
    const r = await payouts(["validate", "samples/payouts-valid.csv", "--sandbox", "--report", report]);
    expect(r.stderr).toContain("all 23 rows are valid");
    expect(r.code).toBe(0);
    const text = await readFile(report, "utf8");
    expect(text.replace(/^\uFEFF/, "").trim()).toBe("row,column,code,message");
  });

  it("does not call a sheet paying the same payee the same amount twice all valid", async () => {
    const sheet = path.join(dir, "twice.csv");
    await writeFile(
      sheet,
      [
        "reference,from_account,to_account,amount,currency",
        "TWICE-1,ops-checking,vendor-ach,250.00,USD",
        "TWICE-2,ops-checking,vendor-ach,250.00,USD",
      ].join("\n"),
    );
    const report = path.join(dir, "twice.json");
    const r = await payouts(["validate", sheet, "--sandbox", "--report", report]);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toContain("rows are valid");
    expect(r.stderr).toContain("--allow-possible-duplicates");
    const problems = JSON.parse(await readFile(report, "utf8")) as Array<Record<string, unknown>>;
    expect(problems).toEqual([
      expect.objectContaining({
        row: 3,
        code: "POSSIBLE_DUPLICATE",
        message: expect.stringContaining("as row 2 (reference TWICE-1)"),
      }),
    ]);
  });

  it("exits 1 and lists every problem with row, column and code for the mistakes sample", async () => {
    const report = path.join(dir, "mistakes.json");
    const r = await payouts(["validate", "samples/payouts-mistakes.csv", "--sandbox", "--report", report]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/rows invalid/);
    const problems = JSON.parse(await readFile(report, "utf8")) as Array<Record<string, unknown>>;
    expect(problems.length).toBeGreaterThan(15);
    expect(problems).toContainEqual(
      expect.objectContaining({ row: 3, column: "reference", code: "REFERENCE_DUPLICATE" }),
    );
    expect(problems).toContainEqual(
      expect.objectContaining({ row: 10, column: "amount", code: "AMOUNT_TOO_PRECISE" }),
    );
  });

  it("writes the report next to the sheet by default", async () => {
    const sheet = path.join(dir, "one-row.csv");
    await writeFile(sheet, "reference,from_account,to_account,amount\nA-1,ops-checking,vendor-ach,12.50\n");
    const r = await payouts(["validate", sheet, "--sandbox"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(path.join(dir, "one-row.validation.csv"));
    await expect(readFile(path.join(dir, "one-row.validation.csv"), "utf8")).resolves.toContain("row,column");
  });

  it("exits 2 with the reason when the file cannot be read", async () => {
    const sheet = path.join(dir, "no-header.csv");
    await writeFile(sheet, "this,is,not\na,payout,sheet\n");
    const r = await payouts(["validate", sheet, "--sandbox"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no-header.csv");
  });

  it("exits 2 and names the variables when no service is configured", async () => {
    const r = await payouts(["validate", "samples/payouts-valid.csv"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("PAYOUTS_API_URL");
    expect(r.stderr).toContain("--sandbox");
  });
});

// exit 2 with one clear line naming the file and the limit, no stack trace.
describe("payouts validate on hostile files", () => {
  const limitNamed: Record<string, RegExp> = {
    "row-bomb.xlsx": /SHEET_MAX_INFLATE_RATIO/,
    "giant-shared.xlsx": /xl\/sharedStrings\.xml/,
    "giant-inline.xlsx": /xl\/worksheets\/sheet1\.xml/,
    "dtd.xlsx": /document type declaration/,
    "big-workbook.xlsx": /xl\/workbook\.xml/,
  };
  const cases: Array<readonly [string, (file: string) => Promise<void>, RegExp]> = [
    ...HOSTILE_FILES.map(([name, write]) => [name, write, limitNamed[name] as RegExp] as const),
    ["long-inline.xlsx", (f) => writeGiantInlineCell(f, 100_000), /SHEET_MAX_CELL_CHARS/],
  ];
  it.each(cases)("%s: exits 2 with one line naming the file and the limit", async (name, write, limit) => {
    const file = path.join(dir, name);
    await write(file);
    const r = await payouts(["validate", file, "--sandbox"]);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^payouts: cannot read the sheet: ${name.replace(".", "\\.")}: `));
    expect(lines[0]).toMatch(limit);
    expect(r.stderr).not.toMatch(/\bat .*\.js:\d+/); // no stack trace
  });

  it("takes its limits from the environment", async () => {
    const file = path.join(dir, "plain.xlsx");
    await writeGiantInlineCell(file, 1000);
    const r = await payouts(["validate", file, "--sandbox"], { SHEET_MAX_CELL_CHARS: "500" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("more than 500 characters (limit SHEET_MAX_CELL_CHARS)");
  });

  it("submit refuses a hostile file alike, before anything is recorded", async () => {
    const file = path.join(dir, "dtd-submit.xlsx");
    await writeDtdWorkbook(file);
    const r = await payouts(["submit", file, "--dry-run"], {
      PAYOUTS_API_URL: "http://127.0.0.1:9/v2",
      PAYOUTS_API_KEY: "sk_test",
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("dtd-submit.xlsx: xl/workbook.xml holds a document type declaration");
  });
});

describe("payouts validate: control totals", () => {
  const sheet = [
    "reference,from_account,to_account,amount,currency",
    "CT-1,ops-checking,vendor-ach,1250.00,USD",
    "CT-2,ops-checking,vendor-ach,250.50,USD",
  ];

  it("reads a trailing total row as the sheet's control total, not as an invalid row", async () => {
    const file = path.join(dir, "with-total.csv");
    await writeFile(file, `${[...sheet, "Total,,,1500.50,USD"].join("\n")}\n`);
    const r = await payouts(["validate", file, "--sandbox"]);
    expect(r.stderr).toContain("all 2 rows are valid");
    expect(r.code).toBe(0);
  });

  it("refuses a sheet whose total row or declared totals do not match, naming both figures", async () => {
    const file = path.join(dir, "wrong-total.csv");
    await writeFile(file, `${[...sheet, "Total,,,1600.50,USD"].join("\n")}\n`);
    const wrongRow = await payouts(["validate", file, "--sandbox"]);
    expect(wrongRow.code).toBe(1);
    expect(wrongRow.stderr).toMatch(
      /CONTROL_TOTAL_MISMATCH: the total row says USD 1600\.50, but the valid USD rows add up to USD 1500\.50/,
    );

    const plain = path.join(dir, "declared.csv");
    await writeFile(plain, `${sheet.join("\n")}\n`);
    const ok = await payouts([
      "validate",
      plain,
      "--sandbox",
      "--expect-rows",
      "2",
      "--expect-total",
      "USD:1500.50",
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    const wrong = await payouts([
      "validate",
      plain,
      "--sandbox",
      "--expect-rows",
      "3",
      "--expect-total",
      "USD:125000.00",
    ]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("CONTROL_TOTAL_MISMATCH");
    expect(wrong.stderr).toContain("CONTROL_ROWS_MISMATCH");
    expect(wrong.stderr).toContain("USD 125000.00");
  });

  it("says what is wrong with a declared total it cannot read", async () => {
    const file = path.join(dir, "declared-bad.csv");
    await writeFile(file, `${sheet.join("\n")}\n`);
    const r = await payouts(["validate", file, "--sandbox", "--expect-total", "125000"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("USD:125000.00");
  });
});
