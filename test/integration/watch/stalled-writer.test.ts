/**
 * A sheet is paid only as it was when it was read (docs/design.md §3.12), with real processes: a
 * writer process writes a CSV in place in the inbox and stalls inside an amount (`…,12` then
 * `50.00,USD,…`), while `payouts worker` watches the folder and pays. Nothing wrong may be paid: the
 * full file is paid once it is complete; a file that changes while it is read is refused with a note
 * and nothing from it is recorded.
 */
import { spawn } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Payment } from "../../../src/payouts-api/index.js";
import { trackChild } from "../../support/child-processes.js";
import { until } from "../../support/wait.js";
import { batchIds } from "./helpers.js";
import { useProcessHarness } from "./process-harness.js";

const h = useProcessHarness();

/** `payouts worker` on its own DATA_DIR and prefix, the watched folder's settings in `env`. */
async function startWorker(label: string, env: Record<string, string> = {}) {
  const t = await h.setup(label);
  const worker = t.spawn(["worker"], env);
  await worker.waitFor(/payment worker ready/, 60_000);
  return { ...t, worker, inbox: t.folder("inbox") };
}

/**
 * A writer process: opens `file`, writes `first`, stalls `stallMs` (or, with `untilTaken`, until the
 * file has left the inbox, i.e. was claimed), writes each of `rest` (`everyMs` apart) and closes.
 */
async function writer(
  file: string,
  first: string,
  rest: string[],
  timing: { stallMs?: number; untilTaken?: boolean; everyMs?: number },
): Promise<number | null> {
  // What to write goes in a file beside (not in the arguments: they have a size limit).
  const plan = path.join(path.dirname(path.dirname(file)), `writer-${Date.now()}.json`);
  await writeFile(plan, JSON.stringify({ file, first, rest, ...timing }));
  const script = `
    const fs = require("node:fs");
    const { file, first, rest, stallMs = 0, untilTaken = false, everyMs = 0 } =
      JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    const fd = fs.openSync(file, "w");
    fs.writeSync(fd, first);
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    (async () => {
      if (untilTaken) while (fs.existsSync(file)) await sleep(1);
      else await sleep(stallMs);
      for (const part of rest) {
        fs.writeSync(fd, part);
        await sleep(everyMs);
      }
      fs.closeSync(fd);
    })();`;
  const child = trackChild(spawn(process.execPath, ["-e", script, plan], { stdio: "ignore" }));
  return new Promise((resolve) => child.once("exit", resolve));
}

const HEADER = "reference,from_account,to_account,amount,currency,delivery\n";

/** Every payment at the sandbox whose externalId starts with `prefix`. */
async function paymentsNamed(prefix: string): Promise<Payment[]> {
  const found: Payment[] = [];
  for await (const p of h.api.payments.listAll({})) if (p.externalId?.startsWith(prefix)) found.push(p);
  return found;
}

describe("a sheet written in place into the watched folder", () => {
  it("with a stall inside an amount (12… then 50.00) is paid only once complete: 1,250.00 and the second row, never 12.00", async () => {
    // The default quiet period: no WATCH_STABLE_MS.
    const t = await startWorker("stall");
    const ref = `STALL${Date.now().toString(36)}`;
    const file = path.join(t.inbox, "april.csv");
    const exited = await writer(
      file,
      `${HEADER}${ref}-1,ops-checking,vendor-ach,12`,
      [`50.00,USD,standard-ach\n${ref}-2,ops-checking,vendor-ach,80.00,USD,standard-ach\n`],
      { stallMs: 2_500 },
    );
    expect(exited).toBe(0);
    const [batchId] = await until(
      "the sheet accepted",
      async () => {
        const ids = await batchIds(h.redis, t.prefix);
        return ids.length > 0 ? ids : undefined;
      },
      60_000,
    );
    const paid = await until(
      "both rows paid",
      async () => {
        const payments = await paymentsNamed(ref);
        return payments.length >= 2 ? payments : undefined;
      },
      60_000,
    );
    expect(paid.map((p) => [p.externalId, p.amount]).sort()).toEqual([
      [`${ref}-1`, 125_000],
      [`${ref}-2`, 8_000],
    ]);
    expect(await batchIds(h.redis, t.prefix)).toEqual([batchId]);
    // The archive holds exactly the bytes that were read and validated: the complete file.
    const archived = await until("the sheet archived", async () =>
      (await readdir(path.join(t.dataDir, "archive"))).find((n) => n.endsWith("--april.csv")),
    );
    expect(await readFile(path.join(t.dataDir, "archive", archived!), "utf8")).toContain(
      `${ref}-1,ops-checking,vendor-ach,1250.00`,
    );
  }, 120_000);

  it("that is still being written when it is read is refused with a note saying what to do; nothing from it is recorded or paid", async () => {
    // A quiet period shorter than the writer's pause, so the sheet is taken half-written; the writer
    // goes on, a row every millisecond or so, from the moment the file was claimed, while it is read.
    const t = await startWorker("changing", { WATCH_STABLE_MS: "300" });
    const ref = `CHANGE${Date.now().toString(36)}`;
    const row = (i: number) =>
      `${ref}-${i},ops-checking,vendor-ach,${(10 + i / 100).toFixed(2)},USD,standard-ach\n`;
    const first = Array.from({ length: 30_000 }, (_, i) => row(i + 1)).join("");
    const rest = Array.from({ length: 1_500 }, (_, i) => row(30_002 + i));
    const file = path.join(t.inbox, "may.csv");
    await writer(
      file,
      `${HEADER}${first}${ref}-30001,ops-checking,vendor-ach,12`,
      ["50.00,USD,standard-ach\n", ...rest],
      {
        untilTaken: true,
        everyMs: 1,
      },
    );
    const note = await until(
      "the refusal note",
      async () => {
        const names = await readdir(path.join(t.dataDir, "rejected")).catch(() => [] as string[]);
        return names.includes("may.csv.error.txt")
          ? readFile(path.join(t.dataDir, "rejected", "may.csv.error.txt"), "utf8")
          : undefined;
      },
      60_000,
    );
    expect(note).toMatch(/^may\.csv was not submitted: it changed while it was being read: /);
    expect(note).toContain("Nothing from it was paid");
    expect(note).toContain("move or rename it into the folder once it is complete");
    // The refused file is the original as the writer left it (complete), ready to be dropped again.
    expect(await readFile(path.join(t.dataDir, "rejected", "may.csv"), "utf8")).toContain(`${ref}-31501,`);
    expect(await batchIds(h.redis, t.prefix)).toEqual([]);
    expect(await paymentsNamed(ref)).toEqual([]);
    expect(t.worker.output.join("\n")).toContain("sheet changed while it was being read; refused");
    // Nothing of it is left in processing/ (the claim and its snapshot go).
    await until("processing/ empty", async () =>
      (await readdir(path.join(t.dataDir, "processing"))).length === 0 ? true : undefined,
    );
  }, 120_000);
});
