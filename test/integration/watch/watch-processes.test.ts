/**
 * The watched folder and nightly runs in real processes (the built CLI; `npm test` builds dist/):
 * two `payouts watch` processes on one folder, and `payouts worker` started after sheets were dropped
 * while it was down, after a crash left one in processing/, with a nightly run fired every second.
 */
import { readdir, readFile, utimes } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BatchStore } from "../../../src/batches/index.js";
import type { RunSummary } from "../../../src/schedule/index.js";
import { until } from "../../support/wait.js";
import { paymentsOfBatch } from "../pipeline/helpers.js";
import { stopProcess } from "../pipeline/processes.js";
import { batchIds, dropFile, uniqueValidSheet, VALID_SAMPLE_ROWS } from "./helpers.js";
import { useProcessHarness } from "./process-harness.js";

const h = useProcessHarness();
const setup = (label: string) => h.setup(label);

/** Sheets archived under their original names (`<batch>--<name>`), as [name, batch] pairs. */
async function archivedSheets(dataDir: string): Promise<[string, string][]> {
  return (await readdir(path.join(dataDir, "archive")).catch(() => [] as string[]))
    .filter((n) => n.includes("--"))
    .map((n) => [n.slice(n.indexOf("--") + 2), n.slice(0, n.indexOf("--"))] as [string, string])
    .sort();
}

describe("hands-off operation in real processes", () => {
  it("two `payouts watch` processes on one folder take each sheet once: one batch per sheet", async () => {
    const t = await setup("watch-procs");
    const a = t.spawn(["watch", "--stable-ms", "300", "--rescan-ms", "1000"]);
    const b = t.spawn(["watch", "--stable-ms", "300", "--rescan-ms", "1000"]);
    await Promise.all([a.waitFor(/watcher ready/), b.waitFor(/watcher ready/)]);

    const names = ["n1.csv", "n2.csv", "n3.csv", "n4.csv"];
    await Promise.all(names.map(async (n) => dropFile(t.folder("inbox"), n, await uniqueValidSheet())));
    const archived = await until("every sheet archived", async () => {
      const sheets = await archivedSheets(t.dataDir);
      return sheets.length >= names.length ? sheets : undefined;
    });
    expect(archived.map(([name]) => name)).toEqual(names);
    expect((await batchIds(h.redis, t.prefix)).sort()).toEqual(archived.map(([, batch]) => batch).sort());
    expect(await readdir(t.folder("rejected"))).toEqual([]);
    // No claim folder is left in processing/ (each goes right after its sheet; allow the last to land).
    await until("processing/ empty", async () => (await readdir(t.folder("processing"))).length === 0);

    expect(await stopProcess(a)).toBe(0);
    expect(await stopProcess(b)).toBe(0);
  });

  it("`payouts worker` takes what arrived while it was down, resumes a crashed submission, runs the nightly schedule, and pays", async () => {
    const t = await setup("worker-procs");
    const longAgo = new Date(Date.now() - 10 * 60_000);
    await dropFile(t.folder("inbox"), "while-down.csv", await uniqueValidSheet());
    const crashed = await dropFile(t.folder("processing"), "crashed.csv", await uniqueValidSheet());
    await utimes(crashed, longAgo, longAgo);
    await dropFile(t.folder("scheduled"), "tonight.csv", await uniqueValidSheet());

    const worker = t.spawn(["worker"], { SCHEDULE_CRON: "* * * * * *", SCHEDULE_TZ: "UTC" });
    const archived = await until(
      "the three sheets archived",
      async () => {
        const sheets = await archivedSheets(t.dataDir);
        return sheets.length >= 3 ? sheets : undefined;
      },
      30_000,
    );
    expect(archived.map(([name]) => name)).toEqual(["crashed.csv", "tonight.csv", "while-down.csv"]);
    expect(await readdir(t.folder("inbox"))).toEqual([]);
    expect(await readdir(t.folder("scheduled"))).toEqual([]);
    // No claim folder is left in processing/ (each goes with its sheet; allow the last rmdir to land).
    await until("processing/ empty", async () => (await readdir(t.folder("processing"))).length === 0);
    expect(await batchIds(h.redis, t.prefix)).toHaveLength(3);

    const tonight = archived.find(([name]) => name === "tonight.csv")![1];
    const summary = await until("the run summary naming tonight's batch", async () => {
      for (const f of await readdir(t.folder("outbox"))) {
        if (!/^run-.*\.json$/.test(f)) continue;
        const s = JSON.parse(await readFile(path.join(t.folder("outbox"), f), "utf8")) as RunSummary;
        if (s.batches.some((b) => b.batchId === tonight)) return s;
      }
      return undefined;
    });
    expect(summary.rows).toBe(VALID_SAMPLE_ROWS);

    // The worker pays what it took: every row of the sheet dropped while it was down is sent once
    // (a row the sandbox refuses, the MXN one without its invoice, ends `rejected` without a payment).
    const whileDown = archived.find(([name]) => name === "while-down.csv")![1];
    const store = new BatchStore(h.redis, { prefix: t.prefix });
    const rows = await until(
      "every row of the dropped sheet sent",
      async () => {
        const list = await store.listRows(whileDown);
        return list.length === VALID_SAMPLE_ROWS && list.every((r) => r.state !== "queued")
          ? list
          : undefined;
      },
      30_000,
    );
    const payments = await paymentsOfBatch(h.api, whileDown);
    expect(new Set(payments.map((p) => p.externalId)).size).toBe(payments.length);
    expect(payments.length).toBe(rows.filter((r) => r.paymentId !== undefined).length);
    expect(payments.length).toBeGreaterThan(VALID_SAMPLE_ROWS / 2);
    expect(await stopProcess(worker)).toBe(0);
  });
});
