/**
 * Files we must write are written, on a real full disk (a small tmpfs): a failed write leaves no temp
 * file and no open handle behind (an XLSX streamed from slow rows used to hang and leave its `.tmp`),
 * and `payouts worker` retries the final result file of a batch that finished while DATA_DIR was full
 * until it is written, saying so at warn and then error.
 */
import { mkdir, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BatchStore } from "../../../src/batches/index.js";
import { writeFileAtomicPatiently, writeTable } from "../../../src/files/index.js";
import { createPayoutsClient } from "../../../src/payouts-api/index.js";
import { connectRedis } from "../../../src/redis/index.js";
import { WEBHOOK_PATH } from "../../../src/server/index.js";
import { CONSUMED_EVENTS } from "../../../src/webhooks/index.js";
import { writeAchSheet } from "../../support/sheets.js";
import { mountSmallDisk, type SmallDisk } from "../../support/tmpfs.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";
import { spawnCli, stopProcess } from "../pipeline/processes.js";

const mounted = await mountSmallDisk(4 * 1024);
const unavailable = "unavailable" in mounted ? mounted.unavailable : undefined;
const disk = mounted as SmallDisk;
const skipNote = unavailable ? ` (skipped: ${unavailable})` : "";

afterAll(async () => {
  if (!unavailable) await disk.remove();
});

/** Every file under `dir` whose name ends in `.tmp`. */
async function tempFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return entries.filter((n) => n.endsWith(".tmp"));
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

describe.skipIf(unavailable !== undefined)(`writing on a full disk${skipNote}`, () => {
  it("an XLSX streamed from slow rows fails at once with ENOSPC, leaving no temp file", async () => {
    const dir = path.join(disk.dir, "xlsx");
    await mkdir(dir, { recursive: true });
    await disk.fill();
    try {
      async function* slowRows() {
        for (let i = 0; i < 50_000; i++) {
          if (i % 500 === 0) await sleep(1);
          yield [String(i), `row ${i} with some text in it`];
        }
      }
      const failed = await writeTable(path.join(dir, "r.xlsx"), {
        columns: ["a", "b"],
        rows: slowRows(),
      }).then(
        () => undefined,
        (err: NodeJS.ErrnoException) => err,
      );
      expect(failed?.code).toBe("ENOSPC");
      expect(failed?.path).toBe(path.join(dir, "r.xlsx"));
      expect(await tempFiles(dir)).toEqual([]);
    } finally {
      await disk.free();
    }
  });

  it("a note is written once there is room again, with a warning for each failed try", async () => {
    const warnings: object[] = [];
    await disk.fill();
    const target = path.join(disk.dir, "note.txt");
    const writing = writeFileAtomicPatiently(target, "why the sheet was refused\n", {
      firstDelayMs: 100,
      logger: { info: () => {}, warn: (o) => warnings.push(o), error: (o) => warnings.push(o) },
    });
    await until("a failed try", async () => (warnings.length > 0 ? true : undefined));
    await disk.free();
    await writing;
    expect(await readFile(target, "utf8")).toBe("why the sheet was refused\n");
    expect(warnings[0]).toMatchObject({ file: target, attempt: 1 });
  });
});

describe.skipIf(unavailable !== undefined)(`payouts worker with DATA_DIR on a full disk${skipNote}`, () => {
  let sandbox: RunningSandbox;
  const prefix = uniquePrefix("full-disk");
  const redis = connectRedis(REDIS_URL);

  beforeAll(async () => {
    // Payments end a few seconds after they are sent: time to fill the disk before the batch finishes.
    sandbox = await startSandbox({ clock: { toInProgressMs: 1_000, toFinalMs: 4_000 } });
  });
  afterAll(async () => {
    await sandbox?.close();
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  it("retries the final result file of a batch that finished while the disk was full until it is written: warn, then error, then the file, no .tmp", async () => {
    const dataDir = path.join(disk.dir, "data");
    const env = {
      PAYOUTS_API_URL: sandbox.url,
      PAYOUTS_API_KEY: sandbox.apiKey,
      REDIS_URL,
      DATA_DIR: dataDir,
      LOG_LEVEL: "info",
    };
    const worker = spawnCli(["worker", "--redis-prefix", prefix], env);
    // The receiver: the sandbox's webhooks move the rows to their final states.
    const serve = spawnCli(["serve", "--port", "0", "--redis-prefix", prefix], env);
    try {
      await worker.waitFor(/payment worker ready/, 60_000);
      const listening = await serve.waitFor(/^listening on http/, 60_000);
      const api = createPayoutsClient({ entityId: "me", baseUrl: sandbox.url, apiKey: sandbox.apiKey });
      await api.webhook.update({
        url: `${/(http:\/\/127\.0\.0\.1:\d+)/.exec(listening)![1]}${WEBHOOK_PATH}`,
        events: [...CONSUMED_EVENTS],
        isActive: true,
      });
      await api.close();
      const sheet = await writeAchSheet(disk.dir, `FULL${Date.now().toString(36)}`, 10);
      const submit = spawnCli(["submit", sheet, "--redis-prefix", prefix], env);
      expect(await submit.exited, submit.output.join("\n")).toBe(0);
      const batchId = submit.output.find((l) => /^b\d{8}T\d{6}-[0-9a-f]{8}$/.test(l))!;
      await disk.fill();

      const store = new BatchStore(redis, { prefix });
      await until("the batch finished", async () =>
        (await store.getBatch(batchId))?.finishedAt ? true : undefined,
      );
      const levels = () =>
        worker.output
          .filter((l) => l.includes("result file") && l.includes(batchId))
          .map((l) => JSON.parse(l) as { level: number; msg: string });
      await until("an error line for the result file", async () =>
        levels().some((l) => l.level === 50) ? true : undefined,
      );
      const outbox = path.join(dataDir, "outbox");
      const failures = levels().filter((l) => l.level >= 40);
      expect(failures[0]).toMatchObject({ level: 40, msg: "result file not written; retrying" });
      expect(levels().find((l) => l.level === 50)?.msg).toBe(
        "result file still not written; retrying until it is",
      );

      await disk.free();
      // A file written before the disk filled shows rows still on their way; the final one, only
      // written once there is room again, shows every row completed.
      const rows = await until("the final result file", async () => {
        const name = (await readdir(outbox)).find((n) => n.endsWith(".result.csv"));
        if (!name) return undefined;
        const text = (await readFile(path.join(outbox, name), "utf8")).replace(/^\uFEFF/, "");
        const parsed = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true }).data;
        return parsed.every((r) => r.status === "completed") ? parsed : undefined;
      });
      expect(rows).toHaveLength(10);
      expect(await tempFiles(dataDir)).toEqual([]);
      expect(levels().some((l) => l.msg === "result file written after failing")).toBe(true);
    } finally {
      await disk.free();
      expect(await stopProcess(worker)).toBe(0);
      expect(await stopProcess(serve)).toBe(0);
    }
  }, 180_000);
});
