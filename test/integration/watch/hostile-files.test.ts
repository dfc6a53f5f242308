/**
 * Hostile files dropped into the watched folder: each ends in rejected/ with a note
 * naming the limit, is never retried, and never stays in processing/; a file past every limit costs
 * only the thread reading it while this process (where payments run) goes on. Real files in a
 * temporary DATA_DIR, a real Redis, the sandbox over loopback.
 */
import { readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { configureSheetLimits } from "../../../src/sheets/index.js";
import { startWatchService } from "../../../src/watch/index.js";
import { HOSTILE_FILES, writeGiantInlineCell } from "../../unit/sheets/hostile-xlsx.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";
import { batchIds, OutcomeLog, sandboxIntake, tempDataDir } from "./helpers.js";

const MiB = 1024 * 1024;
let sandbox: RunningSandbox;
let redis: Redis;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  redis = new Redis(REDIS_URL);
});
afterEach(async () => {
  configureSheetLimits({});
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  redis.disconnect();
  await sandbox.close();
});

/** Writes the files into a staging folder, then starts a watcher on an inbox holding them. */
async function watchWith(label: string, write: (staging: string) => Promise<string[]>) {
  const dataDir = await tempDataDir(label);
  const prefix = uniquePrefix(label);
  const log = new OutcomeLog();
  const names = await write(path.join(dataDir, "inbox"));
  const service = await startWatchService({
    ...sandboxIntake(sandbox, dataDir, prefix),
    stableMs: 100,
    rescanMs: 200,
    leaseMs: 300,
    onOutcome: log.push,
  });
  cleanups.push(async () => {
    await service.stop();
    await deleteKeys(redis, prefix);
    await rm(dataDir, { recursive: true, force: true });
  });
  return { dataDir, prefix, log, names };
}

describe("hostile files in the watched folder", () => {
  it("rejects each with a note naming the limit, never retries it, and leaves nothing in processing/", async () => {
    const t = await watchWith("watch-hostile", async (inbox) => {
      for (const [name, write] of HOSTILE_FILES) await write(path.join(inbox, name));
      return HOSTILE_FILES.map(([name]) => name);
    });
    const expected: Record<string, RegExp> = {
      "row-bomb.xlsx": /LIMIT_EXCEEDED.*SHEET_MAX_INFLATE_RATIO/,
      "giant-shared.xlsx": /LIMIT_EXCEEDED.*xl\/sharedStrings\.xml/,
      "giant-inline.xlsx": /LIMIT_EXCEEDED.*xl\/worksheets\/sheet1\.xml/,
      "dtd.xlsx": /FILE_UNSAFE.*document type declaration/,
      "big-workbook.xlsx": /LIMIT_EXCEEDED.*xl\/workbook\.xml/,
    };
    for (const name of t.names) {
      const outcome = await t.log.settled(name);
      expect(outcome.kind, name).toBe("rejected");
      if (outcome.kind !== "rejected") continue;
      expect(path.dirname(outcome.rejectedAs)).toBe(path.join(t.dataDir, "rejected"));
      const note = await readFile(path.join(t.dataDir, "rejected", `${name}.error.txt`), "utf8");
      expect(note, name).toMatch(expected[name] as RegExp);
    }
    // Several lease periods and rescans later: nothing deferred, retried or left in processing/.
    await sleep(1500);
    for (const name of t.names) expect(t.log.of(name).map((o) => o.kind)).toEqual(["rejected"]);
    expect(await readdir(path.join(t.dataDir, "processing"))).toEqual([]);
    expect(await batchIds(redis, t.prefix)).toEqual([]);
  });

  it("a file past every limit exhausts only its reading thread: this process keeps running", async () => {
    // Limits loosened so that only the thread's heap bound can stop the read.
    configureSheetLimits({ maxInflateRatio: 1e9, maxRowChars: 1e9, maxCellChars: 1e9, readMaxMemoryMb: 16 });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 20);
    try {
      const t = await watchWith("watch-oom", async (inbox) => {
        await writeGiantInlineCell(path.join(inbox, "endless-cell.xlsx"), 60 * MiB);
        return ["endless-cell.xlsx"];
      });
      const ticksBefore = ticks;
      const outcome = await t.log.settled("endless-cell.xlsx", 60_000);
      expect(outcome.kind).toBe("rejected");
      if (outcome.kind === "rejected") expect(outcome.reason).toContain("SHEET_READ_MAX_MEMORY_MB");
      // The event loop here (where payments and reconciliation run) kept turning during the read.
      expect(ticks - ticksBefore).toBeGreaterThan(1);
      expect(await readdir(path.join(t.dataDir, "processing"))).toEqual([]);
    } finally {
      clearInterval(ticker);
    }
  });
});
