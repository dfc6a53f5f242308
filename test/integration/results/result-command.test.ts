/** `payouts result` as a user runs it (the command line in-process, a real Redis). */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { main } from "../../../src/cli/program.js";
import { type BuiltBatch, buildBatch, deleteKeys, openStore, REDIS_URL, uniquePrefix } from "./helpers.js";

const prefix = uniquePrefix("command");
const { redis, store } = openStore(prefix);
let dataDir: string;
let batch: BuiltBatch;
const savedEnv = { DATA_DIR: process.env.DATA_DIR, REDIS_URL: process.env.REDIS_URL };

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "payouts-result-cmd-"));
  process.env.DATA_DIR = dataDir;
  process.env.REDIS_URL = REDIS_URL;
  batch = await buildBatch(store, "xlsx", dataDir);
});

afterAll(async () => {
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await deleteKeys(redis, prefix);
  redis.disconnect();
  await rm(dataDir, { recursive: true, force: true });
});

/** Runs `payouts ...args` and returns its exit code, stdout and stderr. */
async function payouts(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    err += String(chunk);
    return true;
  });
  try {
    const code = await main(["node", "payouts", ...args, "--redis-prefix", prefix]);
    return { code, out, err };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}

describe("payouts result", () => {
  it("writes the sheet's format to DATA_DIR/outbox by default and prints the path", async () => {
    const { code, out } = await payouts("result", batch.batchId);
    expect(code).toBe(0);
    const file = out.trim();
    expect(file).toBe(path.join(dataDir, "outbox", `payroll run.${batch.batchId}.result.xlsx`));
    // An XLSX workbook is a zip.
    expect((await readFile(file)).subarray(0, 2).toString()).toBe("PK");
  });

  it("writes CSV to -o when asked, and takes the format from the -o name", async () => {
    const asked = path.join(dataDir, "mine.csv");
    const byFlag = await payouts("result", batch.batchId, "--format", "csv", "-o", asked);
    expect(byFlag.code).toBe(0);
    expect(byFlag.out.trim()).toBe(asked);
    const text = await readFile(asked, "utf8");
    expect(text.startsWith("\uFEFFreference,to_account,amount")).toBe(true);
    expect(text).toContain("AMOUNT_AMBIGUOUS");

    const byName = path.join(dataDir, "by-name.csv");
    expect((await payouts("result", batch.batchId, "-o", byName)).code).toBe(0);
    expect(await readFile(byName, "utf8")).toBe(text);
  });

  it("exits 2 with a clear message for an unknown batch or a format it cannot write", async () => {
    const missing = await payouts("result", "b-no-such-batch");
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/no batch b-no-such-batch/);
    expect(missing.out).toBe("");

    const badFormat = await payouts("result", batch.batchId, "--format", "pdf");
    expect(badFormat.code).toBe(2);
    expect(badFormat.err).toMatch(/csv or xlsx/);

    const clash = await payouts(
      "result",
      batch.batchId,
      "--format",
      "csv",
      "-o",
      path.join(dataDir, "x.xlsx"),
    );
    expect(clash.code).toBe(2);
    expect(clash.err).toMatch(/does not match/);
  });
});
