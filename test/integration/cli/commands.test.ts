/**
 * The smaller commands as a user runs them: the built binary in a child process.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import ExcelJS from "exceljs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const BIN = path.resolve("bin/payouts.js");
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "payouts-cli-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("payouts template", () => {
  it("writes an XLSX whose first sheet is headed with our columns", async () => {
    const out = path.join(dir, "t.xlsx");
    const { stdout } = await run(process.execPath, [BIN, "template", "-o", out]);
    expect(stdout.trim()).toBe(out);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(out);
    const sheet = wb.worksheets[0];
    expect(sheet).toBeDefined();
    const header = (sheet!.getRow(1).values as unknown[]).filter(Boolean);
    expect(header.slice(0, 4)).toEqual(["reference", "from_account", "to_account", "amount"]);
  });

  it("writes a CSV with only the header, so a blank template can never pay anything", async () => {
    const out = path.join(dir, "t.csv");
    await run(process.execPath, [BIN, "template", "--format", "csv", "-o", out]);
    const lines = (await readFile(out, "utf8"))
      .replace(/^\uFEFF/, "")
      .trim()
      .split(/\r?\n/);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^reference,from_account,to_account,amount,currency,delivery/);
  });

  it("refuses an unknown format with exit code 2", async () => {
    const err = await run(process.execPath, [BIN, "template", "--format", "pdf"]).catch((e: unknown) => e);
    expect((err as { code: number }).code).toBe(2);
    expect((err as { stderr: string }).stderr).toContain("pdf");
  });
});

describe("payouts sandbox", () => {
  it("says it is a sandbox, serves the spec on the printed URL, and stops on SIGTERM", async () => {
    const child = spawn(process.execPath, [BIN, "sandbox", "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let out = "";
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const m = /base URL\s+(\S+)/.exec(out);
          if (m?.[1]) resolve(m[1]);
        });
        child.on("exit", (code) => reject(new Error(`sandbox exited early with ${code}: ${out}`)));
      });
      expect(out).toContain("SANDBOX");
      const key = /API key\s+(\S+)/.exec(out)?.[1] ?? "";
      const res = await fetch(`${url}/limitations`, {
        headers: { "api-key": key, "service-entity-id": "me" },
      });
      expect(res.status).toBe(200);
      const unauth = await fetch(`${url}/limitations`, { headers: { "service-entity-id": "me" } });
      expect(unauth.status).toBe(401);
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});
