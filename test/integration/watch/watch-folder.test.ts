/**
 * The watched folder with real files in a temporary DATA_DIR, a real Redis (unique prefix) and the
 * sandbox over loopback. Watchers run in this process (several at once for the two-watcher case);
 * watch-processes.test.ts runs them as real processes.
 */
import { mkdir, open, readdir, readFile, rm, symlink, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startWatchService, type WatchService } from "../../../src/watch/index.js";
import { until } from "../../support/wait.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";
import {
  batchIds,
  dropFile,
  MISTAKES_SAMPLE,
  OutcomeLog,
  sandboxIntake,
  tempDataDir,
  uniqueValidSheet,
  VALID_SAMPLE_ROWS,
} from "./helpers.js";

let sandbox: RunningSandbox;
let redis: Redis;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ clock: { toInProgressMs: 50, toFinalMs: 50 } });
  redis = new Redis(REDIS_URL);
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  redis.disconnect();
  await sandbox.close();
});

/** A fresh DATA_DIR and Redis prefix; `start()` starts a watcher on them (stopped after the test). */
async function setup(label: string) {
  const dataDir = await tempDataDir(label);
  const prefix = uniquePrefix(label);
  const log = new OutcomeLog();
  cleanups.push(async () => {
    await deleteKeys(redis, prefix);
    await rm(dataDir, { recursive: true, force: true });
  });
  const inbox = path.join(dataDir, "inbox");
  return {
    dataDir,
    prefix,
    log,
    inbox,
    folder: (name: string) => path.join(dataDir, name),
    async start(opts: { stableMs?: number } = {}): Promise<WatchService> {
      const service = await startWatchService({
        ...sandboxIntake(sandbox, dataDir, prefix),
        stableMs: opts.stableMs ?? 200,
        rescanMs: 500,
        onOutcome: log.push,
      });
      cleanups.push(() => service.stop());
      return service;
    },
  };
}

describe("the watched folder", () => {
  it("takes a sheet copied in slowly only once it is complete", async () => {
    const t = await setup("watch-slow");
    await t.start({ stableMs: 1000 });
    const content = await uniqueValidSheet();
    // Written in pieces with pauses well under the stability interval, as a slow copy over a share.
    const file = await open(path.join(t.inbox, "slow.csv"), "w");
    const pieces = 8;
    const size = Math.ceil(content.length / pieces);
    for (let i = 0; i < pieces; i++) {
      await file.write(content.slice(i * size, (i + 1) * size));
      await file.sync();
      await sleep(100);
    }
    await file.close();

    const outcome = await t.log.settled("slow.csv");
    expect(outcome.kind, JSON.stringify(outcome)).toBe("accepted");
    if (outcome.kind !== "accepted") return;
    expect(outcome.rows).toBe(VALID_SAMPLE_ROWS);
    expect(await readFile(outcome.archivedAs, "utf8")).toBe(content);
    expect(path.basename(outcome.archivedAs)).toBe(`${outcome.batchId}--slow.csv`);
    expect(t.log.of("slow.csv")).toHaveLength(1);
    expect(await readdir(t.inbox)).toEqual([]);
    expect(await readdir(t.folder("rejected"))).toEqual([]);
    expect(await batchIds(redis, t.prefix)).toEqual([outcome.batchId]);
  });

  it("ignores lock, partial and hidden files, and refuses other types and symlinks with a note", async () => {
    const t = await setup("watch-refuse");
    const outside = path.join(t.dataDir, "outside.csv");
    await writeFile(outside, await uniqueValidSheet());
    await mkdir(t.inbox, { recursive: true });
    for (const name of [
      "~$payouts.xlsx",
      ".hidden.csv",
      "payouts.csv.part",
      "download.csv.crdownload",
      "x.tmp",
    ]) {
      await writeFile(path.join(t.inbox, name), "reference,amount\n");
    }
    await writeFile(path.join(t.inbox, "notes.txt"), "not a sheet\n");
    await symlink(outside, path.join(t.inbox, "link.csv"));
    await t.start();

    const notes = await t.log.settled("notes.txt");
    const link = await t.log.settled("link.csv");
    expect(notes.kind).toBe("rejected");
    expect(link.kind).toBe("rejected");
    if (notes.kind !== "rejected" || link.kind !== "rejected") return;
    expect(await readFile(notes.notePath, "utf8")).toMatch(/unsupported file type "\.txt"/);
    expect(path.basename(notes.notePath)).toBe("notes.txt.error.txt");
    expect(await readFile(link.notePath, "utf8")).toMatch(/symbolic links are refused/);
    expect(await readFile(outside, "utf8")).toContain("reference"); // the link's target is untouched
    expect((await readdir(t.folder("rejected"))).sort()).toEqual(
      ["link.csv", "link.csv.error.txt", "notes.txt", "notes.txt.error.txt"].sort(),
    );
    expect((await readdir(t.inbox)).sort()).toEqual(
      ["~$payouts.xlsx", ".hidden.csv", "payouts.csv.part", "download.csv.crdownload", "x.tmp"].sort(),
    );
    expect(await batchIds(redis, t.prefix)).toEqual([]);
  });

  it("moves an invalid sheet to rejected/ with its validation report beside it, and submits nothing", async () => {
    const t = await setup("watch-invalid");
    await t.start();
    await dropFile(t.inbox, "mistakes.csv", await readFile(MISTAKES_SAMPLE));
    const outcome = await t.log.settled("mistakes.csv");
    expect(outcome.kind).toBe("rejected");
    if (outcome.kind !== "rejected") return;
    expect(outcome.rejectedAs).toBe(path.join(t.folder("rejected"), "mistakes.csv"));
    expect(outcome.notePath).toBe(path.join(t.folder("rejected"), "mistakes.validation.csv"));
    const report = await readFile(outcome.notePath, "utf8");
    expect(report).toMatch(/row,column,code,message/);
    expect(report.split("\n").length).toBeGreaterThan(5);
    expect(await readdir(t.folder("processing"))).toEqual([]);
    expect(await batchIds(redis, t.prefix)).toEqual([]);
  });

  it("refuses a sheet with a possible duplicate (nobody at the folder can confirm it), saying how a person does", async () => {
    const t = await setup("watch-dup");
    await t.start();
    const sheet = [
      "reference,from_account,to_account,amount,currency",
      "WD-1,ops-checking,vendor-ach,321.00,USD",
      "WD-2,ops-checking,vendor-ach,321.00,USD",
    ].join("\n");
    await dropFile(t.inbox, "twice.csv", sheet);
    const outcome = await t.log.settled("twice.csv");
    expect(outcome.kind).toBe("rejected");
    if (outcome.kind !== "rejected") return;
    expect(outcome.reason).toContain("--allow-possible-duplicates");
    expect(await readFile(outcome.notePath!, "utf8")).toContain("POSSIBLE_DUPLICATE");
    expect(await batchIds(redis, t.prefix)).toEqual([]);
  });

  it("starts no second batch when the same file is dropped twice; the note names the first batch", async () => {
    const t = await setup("watch-dup");
    await t.start();
    const content = await uniqueValidSheet();
    await dropFile(t.inbox, "april.csv", content);
    const first = await t.log.settled("april.csv");
    expect(first.kind).toBe("accepted");
    if (first.kind !== "accepted") return;

    await dropFile(t.inbox, "april.csv", content);
    const second = await until("the second drop handled", () => t.log.of("april.csv")[1]);
    expect(second.kind).toBe("rejected");
    if (second.kind !== "rejected") return;
    expect(second.duplicateOf).toBe(first.batchId);
    expect(await readFile(second.notePath, "utf8")).toContain(`already submitted as batch ${first.batchId}`);
    expect(await batchIds(redis, t.prefix)).toEqual([first.batchId]);
  });

  it("at start, resumes sheets a crash left in processing/ and takes sheets dropped while it was stopped", async () => {
    const t = await setup("watch-crash");
    const longAgo = new Date(Date.now() - 10 * 60_000);
    // Left by a crash between the move and the submission: one in a claim folder, one put there plainly.
    const claimed = path.join(t.folder("processing"), "20261122T010000-deadbeef", "crashed.csv");
    await dropFile(path.dirname(claimed), "crashed.csv", await uniqueValidSheet());
    // The lease of a claimed sheet is its claim folder's time: this one ran out long ago.
    await utimes(path.dirname(claimed), longAgo, longAgo);
    const plain = await dropFile(t.folder("processing"), "plain.csv", await uniqueValidSheet());
    await utimes(plain, longAgo, longAgo);
    // Dropped while no watcher ran.
    await dropFile(t.inbox, "while-down.csv", await uniqueValidSheet());
    // Claimed just now by another watcher that is still working on it (its lease is fresh): not ours.
    const owned = await dropFile(
      path.join(t.folder("processing"), "20261122T030000-0000cafe"),
      "owned.csv",
      await uniqueValidSheet(),
    );

    await t.start();
    const outcomes = await Promise.all(
      ["crashed.csv", "plain.csv", "while-down.csv"].map((f) => t.log.settled(f)),
    );
    for (const o of outcomes) expect(o.kind, JSON.stringify(o)).toBe("accepted");
    expect(await readdir(t.folder("processing"))).toEqual(["20261122T030000-0000cafe"]);
    expect(await readFile(owned, "utf8")).toContain("reference");
    expect(t.log.of("owned.csv")).toEqual([]);
    expect(await readdir(t.inbox)).toEqual([]);
    expect(await batchIds(redis, t.prefix)).toHaveLength(3);
  });

  it("archives a sheet found in processing/ whose batch was already accepted, without a second batch", async () => {
    const t = await setup("watch-resubmit");
    const content = await uniqueValidSheet();
    const first = await t.start();
    await dropFile(t.inbox, "done.csv", content);
    const accepted = await t.log.settled("done.csv");
    expect(accepted.kind).toBe("accepted");
    if (accepted.kind !== "accepted") return;
    await first.stop();

    // A crash after the submission but before the move to archive/ leaves the sheet in processing/.
    const leftOver = await dropFile(t.folder("processing"), "done.csv", content);
    const longAgo = new Date(Date.now() - 10 * 60_000);
    await utimes(leftOver, longAgo, longAgo);
    await t.start();
    const again = await until("the left-over sheet handled", () => t.log.of("done.csv")[1]);
    expect(again).toMatchObject({ kind: "accepted", batchId: accepted.batchId, alreadyAccepted: true });
    expect(await batchIds(redis, t.prefix)).toEqual([accepted.batchId]);
    expect(await readdir(t.folder("processing"))).toEqual([]);
  });

  it("two watchers on one folder never take the same file: one batch per sheet", async () => {
    const t = await setup("watch-two");
    await Promise.all([t.start(), t.start()]);
    const names = ["one.csv", "two.csv", "three.csv", "four.csv"];
    await Promise.all(names.map(async (n) => dropFile(t.inbox, n, await uniqueValidSheet())));
    for (const name of names) {
      const outcome = await t.log.settled(name);
      expect(outcome.kind, JSON.stringify(outcome)).toBe("accepted");
    }
    // Each sheet was accepted exactly once; the other watcher, if it tried, found it taken.
    for (const name of names) {
      expect(t.log.of(name).filter((o) => o.kind === "accepted")).toHaveLength(1);
      expect(t.log.of(name).filter((o) => o.kind === "rejected")).toHaveLength(0);
    }
    expect(await batchIds(redis, t.prefix)).toHaveLength(names.length);
    const archived = (await readdir(t.folder("archive"))).filter((n) => n.includes("--"));
    expect(archived.map((n) => n.split("--")[1]).sort()).toEqual([...names].sort());
  });
});
