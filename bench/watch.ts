/**
 * `npm run bench:watch [-- --files N --concurrency C --stable-ms MS]`: the watched folder under a
 * drop of many sheets at once. A private redis-server, `payouts sandbox` and one `payouts worker`
 * (which watches DATA_DIR/inbox and pays), each its own process; N one-row sheets (default 10,000)
 * written aside and renamed into the inbox together, then timed until every one was submitted (a batch
 * recorded and the sheet archived) and until every row was paid, one payment each (the sandbox's
 * payments, counted by externalId).
 *
 * Target: all submitted within a few minutes, one payment each. The quiet period counts from the drop
 * (a renamed file's change time is the rename), so it is part of the figure. The machine is shared:
 * figures are noisy, and the load average is printed with them.
 */
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { startPrivateRedis } from "../src/demo/private-redis.js";
import { createPayoutsClient } from "../src/payouts-api/index.js";
import { cpuSecondsOf, type Proc, startPayouts, startSandboxProcess, stopProcess } from "./lib/processes.js";

const USAGE =
  "usage: bench:watch [-- --files N --concurrency C --stable-ms MS --timeout-s S --cpu-prof DIR]\n" +
  "  --files N        one-row sheets dropped at once (default 10000)\n" +
  "  --concurrency C  WATCH_CONCURRENCY of the worker (default: the setting's default)\n" +
  "  --stable-ms MS   WATCH_STABLE_MS, the quiet period (default: the setting's default)\n" +
  "  --timeout-s S    give up after S seconds (default 1800)\n" +
  "  --cpu-prof DIR   run the worker under node --cpu-prof, its profile written to DIR on exit\n";

function parseBenchArgs() {
  try {
    return parseArgs({
      options: {
        files: { type: "string", default: "10000" },
        concurrency: { type: "string" },
        "stable-ms": { type: "string" },
        "timeout-s": { type: "string", default: "1800" },
        "cpu-prof": { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    }).values;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

const values = parseBenchArgs();
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const FILES = Number(values.files);
const TIMEOUT_MS = Number(values["timeout-s"]) * 1000;
const say = (line: string) => process.stdout.write(`${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
/** "Within a few minutes". */
const TARGET_MS = 5 * 60_000;

async function main(): Promise<number> {
  const dir = await mkdtemp(path.join(tmpdir(), "payouts-bench-watch-"));
  const dataDir = path.join(dir, "data");
  const aside = path.join(dataDir, "aside");
  const inbox = path.join(dataDir, "inbox");
  await mkdir(aside, { recursive: true });
  await mkdir(inbox, { recursive: true });
  const redis = await startPrivateRedis();
  const probe = new Redis(redis.url, { maxRetriesPerRequest: null });
  const sandbox = await startSandboxProcess();
  const procs: Proc[] = [sandbox];
  try {
    const env = {
      REDIS_URL: redis.url,
      PAYOUTS_API_URL: sandbox.url,
      PAYOUTS_API_KEY: sandbox.apiKey,
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      PAYOUTS_RATE_LIMIT_PER_SECOND: "100000",
      WORKER_CONCURRENCY: "32",
      ...(values.concurrency ? { WATCH_CONCURRENCY: values.concurrency } : {}),
      ...(values["stable-ms"] ? { WATCH_STABLE_MS: values["stable-ms"] } : {}),
    };
    const run = `W${Date.now().toString(36)}`;
    say(`writing ${FILES} one-row sheets aside...`);
    for (let i = 1; i <= FILES; i++) {
      await writeFile(
        path.join(aside, `sheet-${i}.csv`),
        `reference,from_account,to_account,amount,currency,delivery\n${run}-${i},ops-checking,vendor-ach,${(10 + i / 100).toFixed(2)},USD,standard-ach\n`,
      );
    }
    let ready = false;
    const cpuProf = values["cpu-prof"];
    const worker = startPayouts(
      "worker",
      ["worker"],
      { ...env, LOG_LEVEL: "info" },
      (line) => {
        if (line.includes("payment worker ready")) ready = true;
      },
      cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(cpuProf)}`] : [],
    );
    procs.push(worker);
    for (const deadline = Date.now() + 60_000; !ready; await sleep(100))
      if (Date.now() > deadline) throw new Error("the worker did not start within 60 s");

    say(`dropping ${FILES} sheets into the inbox at once (load ${loadavg()[0]!.toFixed(1)})`);
    // CPU seconds of the worker and Redis since the drop (payments run beside submissions).
    const cpuNow = async () => ({
      worker: await cpuSecondsOf(worker.child.pid),
      redis: await cpuSecondsOf(redis.pid),
    });
    const cpuAtDrop = await cpuNow();
    await probe.config("RESETSTAT");
    const cpuSince = async (start: { worker: number; redis: number }) => {
      const now = await cpuNow();
      return { worker: now.worker - start.worker, redis: now.redis - start.redis };
    };
    const dropped = Date.now();
    for (let i = 1; i <= FILES; i++)
      await rename(path.join(aside, `sheet-${i}.csv`), path.join(inbox, `sheet-${i}.csv`));
    const dropMs = Date.now() - dropped;

    let submittedMs: number | undefined;
    let cpuSubmitted: { worker: number; redis: number } | undefined;
    let lastLine = 0;
    for (;;) {
      const batches = await probe.zcard("payouts:batches");
      const archived = (await readdir(path.join(dataDir, "archive")).catch(() => [] as string[])).filter(
        (n) => n.includes("--sheet-"),
      ).length;
      if (batches >= FILES && archived >= FILES) {
        submittedMs = Date.now() - dropped;
        cpuSubmitted = await cpuSince(cpuAtDrop);
        break;
      }
      if (Date.now() - lastLine > 10_000) {
        lastLine = Date.now();
        say(
          `  ${seconds(Date.now() - dropped)}: ${batches} batches, ${archived} sheets archived (load ${loadavg()[0]!.toFixed(1)})`,
        );
      }
      if (Date.now() - dropped > TIMEOUT_MS) break;
      await sleep(250);
    }
    const paid = await paymentsNamed(sandbox, run, FILES, dropped);
    const cpuPaid = await cpuSince(cpuAtDrop);
    const commands = commandStats(String(await probe.info("commandstats")));
    const rejected = (await readdir(path.join(dataDir, "rejected")).catch(() => [] as string[])).length;
    say("");
    say(`files dropped:            ${FILES} (renamed in within ${seconds(dropMs)})`);
    if (submittedMs === undefined) say(`all submitted:            NOT within ${seconds(TIMEOUT_MS)}`);
    else
      say(
        `all submitted:            ${seconds(submittedMs)} after the drop, ${(FILES / (submittedMs / 1000)).toFixed(0)} sheets/s` +
          `  (target < ${seconds(TARGET_MS)}: ${submittedMs < TARGET_MS ? "ok" : "MISSED"})`,
      );
    say(
      `paid:                     ${paid.payments} payments for ${paid.distinct} of ${FILES} references` +
        `${paid.atMs === undefined ? "" : `, all ${seconds(paid.atMs)} after the drop`}` +
        `  (one each: ${paid.payments === FILES && paid.distinct === FILES ? "ok" : "MISSED"})`,
    );
    say(`rejected files:           ${rejected}`);
    const perSheet = (cpu: { worker: number; redis: number }) =>
      `worker ${cpu.worker.toFixed(1)} s (${((cpu.worker / FILES) * 1000).toFixed(2)} ms a sheet), ` +
      `Redis ${cpu.redis.toFixed(1)} s (${((cpu.redis / FILES) * 1000).toFixed(2)} ms a sheet)`;
    if (cpuSubmitted) say(`CPU until all submitted:  ${perSheet(cpuSubmitted)}`);
    say(`CPU until all paid:       ${perSheet(cpuPaid)}`);
    const commandTotal = [...commands.values()].reduce((sum, n) => sum + n, 0);
    say(
      `Redis commands:           ${(commandTotal / FILES).toFixed(1)} a sheet (${[...commands]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8)
        .map(([name, n]) => `${name} ${(n / FILES).toFixed(1)}`)
        .join(", ")})`,
    );
    say(
      `load average:             ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}`,
    );
    return submittedMs !== undefined && paid.payments === FILES && paid.distinct === FILES ? 0 : 1;
  } finally {
    for (const proc of procs.reverse()) await stopProcess(proc);
    probe.disconnect();
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Calls per command from INFO commandstats (`cmdstat_get:calls=3,...`). */
function commandStats(info: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const m of info.matchAll(/^cmdstat_(\S+?):calls=(\d+)/gm)) calls.set(m[1]!, Number(m[2]));
  return calls;
}

/** Payments at the sandbox whose externalId starts with `run`: how many, how many distinct, when all were there. */
async function paymentsNamed(
  sandbox: { url: string; apiKey: string },
  run: string,
  expected: number,
  since: number,
): Promise<{ payments: number; distinct: number; atMs: number | undefined }> {
  const api = createPayoutsClient({ entityId: "me", baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  try {
    const deadline = since + TIMEOUT_MS;
    for (;;) {
      let payments = 0;
      const ids = new Set<string>();
      for await (const p of api.payments.listAll({ limit: 50 })) {
        if (!p.externalId?.startsWith(`${run}-`)) continue;
        payments++;
        ids.add(p.externalId);
      }
      if (payments >= expected || Date.now() > deadline)
        return { payments, distinct: ids.size, atMs: payments >= expected ? Date.now() - since : undefined };
      await sleep(1_000);
    }
  } finally {
    await api.close();
  }
}

process.exitCode = await main();
