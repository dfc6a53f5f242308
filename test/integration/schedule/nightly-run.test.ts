/**
 * Nightly runs with a short cron (`* * * * * *`, every second) fired by BullMQ's job scheduler over a
 * real Redis: the sheets waiting in scheduled/ are submitted exactly as the watched inbox does, and
 * the run's summary lands in outbox/. Without SCHEDULE_CRON the schedule is removed.
 */
import { readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bullPrefix } from "../../../src/pipeline/index.js";
import {
  type RunSummary,
  SCHEDULED_RUN_QUEUE_NAME,
  type ScheduleService,
  startScheduleService,
} from "../../../src/schedule/index.js";
import { until } from "../../support/wait.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";
import {
  batchIds,
  dropFile,
  MISTAKES_SAMPLE,
  sandboxIntake,
  tempDataDir,
  uniqueValidSheet,
  VALID_SAMPLE_ROWS,
} from "../watch/helpers.js";

let sandbox: RunningSandbox;
let redis: Redis;
let dataDir: string;
const prefix = uniquePrefix("schedule");

beforeAll(async () => {
  sandbox = await startSandbox({ clock: { toInProgressMs: 50, toFinalMs: 50 } });
  redis = new Redis(REDIS_URL);
  dataDir = await tempDataDir("schedule");
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
  await sandbox.close();
  await rm(dataDir, { recursive: true, force: true });
});

function start(
  cron: string | undefined,
  onRun?: (run: { summary: RunSummary }) => void,
): Promise<ScheduleService> {
  return startScheduleService({
    ...sandboxIntake(sandbox, dataDir, prefix),
    cron,
    tz: "Europe/Berlin",
    stableMs: 100,
    ...(onRun ? { onRun } : {}),
  });
}

async function schedulerIds(): Promise<string[]> {
  const queue = new Queue(SCHEDULED_RUN_QUEUE_NAME, { connection: redis, prefix: bullPrefix(prefix) });
  try {
    return (await queue.getJobSchedulers()).map((s) => s.key);
  } finally {
    await queue.close();
  }
}

describe("nightly runs", () => {
  it("submits every sheet waiting in scheduled/ when the cron fires, and writes the run summary to outbox/", async () => {
    const scheduled = path.join(dataDir, "scheduled");
    const sheetA = await uniqueValidSheet();
    await dropFile(scheduled, "april-a.csv", sheetA);
    await dropFile(scheduled, "april-b.csv", await uniqueValidSheet());
    await dropFile(scheduled, "mistakes.csv", await readFile(MISTAKES_SAMPLE));
    await dropFile(scheduled, "~$april-a.xlsx", "lock");

    const runs: RunSummary[] = [];
    const service = await start("* * * * * *", (run) => runs.push(run.summary));
    let summary: RunSummary;
    try {
      expect(service.scheduled).toBe(true);
      expect(await schedulerIds()).toEqual(["nightly-run"]);
      summary = await until("a run that took the sheets", () => runs.find((r) => r.batches.length > 0));
    } finally {
      await service.stop();
    }

    expect(summary.batches.map((b) => b.file).sort()).toEqual(["april-a.csv", "april-b.csv"]);
    expect(summary.rows).toBe(2 * VALID_SAMPLE_ROWS);
    expect(summary.totals.EUR).toEqual({ rows: 2, amountMinor: 840_000, amount: "8400.00" });
    expect(summary.rejected).toHaveLength(1);
    expect(summary.rejected[0]).toMatchObject({ file: "mistakes.csv" });
    expect(path.basename(summary.rejected[0]!.note)).toBe("mistakes.validation.csv");

    // The summary on disk is the one logged; the sheets went where the watched inbox sends them.
    const files = (await readdir(path.join(dataDir, "outbox"))).filter((f) => /^run-.*\.json$/.test(f));
    const onDisk = await Promise.all(
      files.map(
        async (f) => JSON.parse(await readFile(path.join(dataDir, "outbox", f), "utf8")) as RunSummary,
      ),
    );
    expect(onDisk.find((s) => s.batches.length > 0)).toEqual(summary);
    expect(await readdir(scheduled)).toEqual(["~$april-a.xlsx"]);
    const ids = summary.batches.map((b) => b.batchId).sort();
    expect((await batchIds(redis, prefix)).sort()).toEqual(ids);
    const archive = await readdir(path.join(dataDir, "archive"));
    for (const b of summary.batches) expect(archive).toContain(`${b.batchId}--${b.file}`);
    expect(
      await readFile(
        path.join(
          dataDir,
          "archive",
          `${summary.batches.find((b) => b.file === "april-a.csv")!.batchId}--april-a.csv`,
        ),
        "utf8",
      ),
    ).toBe(sheetA);
  });

  it("without SCHEDULE_CRON schedules nothing and removes a schedule left by an earlier configuration", async () => {
    const service = await start("0 2 * * *");
    await service.stop();
    expect(await schedulerIds()).toEqual(["nightly-run"]);
    const unscheduled = await start(undefined);
    expect(unscheduled.scheduled).toBe(false);
    await unscheduled.stop();
    expect(await schedulerIds()).toEqual([]);
  });
});
