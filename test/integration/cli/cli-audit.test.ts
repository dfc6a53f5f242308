/**
 * Money moved from the shell is in the audit trail (docs/design.md §3.14): `payouts submit`,
 * `payouts retry` and `payouts recover`, run as an operator runs them (the built CLI in child
 * processes, a real Redis, the sandbox over loopback), each leave an entry naming `cli:<os user>`,
 * the batch and what was done; `payouts audit-trail --csv -o` writes the trail formula-safe, whole or
 * not at all.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditTrail } from "../../../src/audit/index.js";
import { BatchStore } from "../../../src/batches/index.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";
import { spawnCli } from "../pipeline/processes.js";

let sandbox: RunningSandbox;
let redis: Redis;
let dataDir: string;
const prefix = uniquePrefix("cli-audit");
let env: Record<string, string>;
const me = `cli:${os.userInfo().username}`;

beforeAll(async () => {
  sandbox = await startSandbox({ clock: { toInProgressMs: 50, toFinalMs: 50 } });
  redis = new Redis(REDIS_URL);
  dataDir = await mkdtemp(path.join(os.tmpdir(), "payouts-cli-audit-"));
  env = {
    PAYOUTS_API_URL: sandbox.url,
    PAYOUTS_API_KEY: sandbox.apiKey,
    REDIS_URL,
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
  };
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
  await sandbox.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function run(args: string[]) {
  const p = spawnCli([...args, "--redis-prefix", prefix], env);
  const code = await p.exited;
  return { code, output: p.output.join("\n") };
}

async function entriesOf(batchId: string) {
  const { data } = await new AuditTrail(redis, prefix).list({ limit: 100 });
  return data.filter((e) => e.target === batchId);
}

describe("the audit trail of CLI commands", () => {
  it("records submit, retry and recover as cli:<os user>", async () => {
    const ref = `CLIA${randomBytes(4).toString("hex")}`;
    const sheet = path.join(dataDir, "cli-audit.csv");
    await writeFile(
      sheet,
      `reference,from_account,to_account,amount,currency\r\n${ref},ops-checking,vendor-ach,12.00,USD\r\n`,
    );
    const submitted = await run(["submit", sheet]);
    expect(submitted.code, submitted.output).toBe(0);
    const batchId = /b\d{8}T\d{6}-[0-9a-f]{8}/.exec(submitted.output)?.[0];
    expect(batchId).toBeDefined();
    if (!batchId) return;
    const [submit] = await entriesOf(batchId);
    expect(submit).toMatchObject({
      action: "batch.submit",
      actor: { kind: "cli", name: me },
      from: "cli",
      outcome: "ok",
      detail: { file: "cli-audit.csv", rows: 1, totals: { USD: 1200 } },
    });

    // What the reconcile worker would record: the payment failed. Then the operator retries it.
    const store = new BatchStore(redis, { prefix });
    expect((await store.changeRow(batchId, ref, { to: "failed", note: "test" })).outcome).toBe("ok");
    const retried = await run(["retry", batchId]);
    expect(retried.code, retried.output).toBe(0);
    const retry = (await entriesOf(batchId)).find((e) => e.action === "rows.retry");
    expect(retry).toMatchObject({
      actor: { kind: "cli", name: me },
      outcome: "ok",
      detail: { retried: [2] },
    });

    const recovered = await run(["recover", batchId]);
    expect(recovered.code, recovered.output).toBe(0);
    const recover = (await entriesOf(batchId)).find((e) => e.action === "batch.recover");
    expect(recover).toMatchObject({ actor: { kind: "cli", name: me }, outcome: "ok", detail: { rows: 1 } });

    // `payouts audit-trail` reads the same entries back, filtered, as CSV.
    const exported = await run(["audit-trail", "--batch", batchId, "--action", "rows", "--csv"]);
    expect(exported.code, exported.output).toBe(0);
    const lines = exported.output
      .replace(/^\uFEFF/, "")
      .trim()
      .split(/\r?\n/);
    expect(lines[0]).toBe("id,at,actor_kind,actor,role,action,target,from,outcome,detail");
    expect(lines.slice(1).map((l) => l.split(",")[5])).toEqual(["rows.retry"]);
  });

  it("exports CSV to a file whole and formula-safe, and leaves no file when the export fails", async () => {
    const trail = new AuditTrail(redis, prefix);
    const formula = '=HYPERLINK("http://evil.example","click")';
    const batchId = `b-csv-${randomBytes(3).toString("hex")}`;
    await trail.record({
      actor: { kind: "user", name: formula },
      action: "batch.pause",
      target: batchId,
      from: "@127.0.0.1",
      outcome: "ok",
      detail: { reason: formula },
    });
    const out = path.join(dataDir, "audit-export.csv");
    const ok = await run(["audit-trail", "--batch", batchId, "--csv", "-o", out]);
    expect(ok.code, ok.output).toBe(0);
    const cells = (await readFile(out, "utf8")).replace(/^\uFEFF/, "").split("\r\n")[1]!;
    expect(cells).toContain(`"'=HYPERLINK(""http://evil.example"",""click"")"`);
    expect(cells).toContain(",'@127.0.0.1,");
    expect(cells).not.toMatch(/,"?[=+\-@]/);

    // An entry that cannot be read, older than a good one: the export fails after writing a line.
    // The command fails and the file it was asked for is not there half written.
    const broken = uniquePrefix("cli-audit-broken");
    await redis.xadd(`${broken}:audit`, "*", "at", "x", "entry", "{not json");
    await new AuditTrail(redis, broken).record({
      actor: { kind: "cli", name: me },
      action: "batch.pause",
      from: "cli",
      outcome: "ok",
    });
    const failing = path.join(dataDir, "audit-failed.csv");
    const p = spawnCli(["audit-trail", "--csv", "-o", failing, "--redis-prefix", broken], env);
    const code = await p.exited;
    await deleteKeys(redis, broken);
    expect(code).not.toBe(0);
    await expect(stat(failing)).rejects.toMatchObject({ code: "ENOENT" });
  });
});
