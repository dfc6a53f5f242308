/**
 * `npm run bench:e2e [-- --rows N --workers 1,2,3 --concurrency C --rate R --no-plain --cluster]`: the
 * whole job at scale, run as in production. A private redis-server, `payouts sandbox`, `payouts serve`
 * (webhooks registered with `payouts webhook setup`) and W `payouts worker` processes, each its own
 * process; then `payouts submit` of a generated N-row CSV (default 100,000), rate limit off,
 * concurrency 32.
 *
 * `--rate R`: the sandbox allows R requests a second (`rateLimitPerSecond`, answering 429 beyond) and
 * the tool is set to the same (`PAYOUTS_RATE_LIMIT_PER_SECOND`), as against a real service; the sheet
 * is then USD rows only (`--sheet mixed` keeps the FX rows, each of which also needs a quote), so a row
 * needs one request and N/R seconds is the least a batch can take: the run prints its wall time
 * against N/R.
 *
 * It prints, with the target beside each figure: the time from submit to every row final and the
 * final result file written; end-to-end rows/s; a bare undici loop creating N payments against a
 * fresh sandbox in the same run and the ratio; N do-nothing BullMQ jobs, so the CPU per row of the two
 * parts every row costs (its share of a job, its create) stands beside the tool's own; API requests per row by kind (the sandbox's own
 * counters); Redis used_memory per row at its peak and after the batch finished; the peak RSS of every
 * process; result-file writes and the share of the workers' time they took. With several worker
 * counts (`--workers 1,2,3`) the whole run repeats for each and a rows/s line per count closes.
 *
 * `--cluster`: Redis is a private 3-master Redis Cluster (REDIS_CLUSTER_NODES); its figures are those
 * of the master that holds the installation's one slot (`{payouts}`).
 *
 * The machine is shared: figures are noisy, and the load average is printed with them.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { Cluster, Redis } from "ioredis";
import { BatchStore, DEFAULT_KEY_PREFIX } from "../src/batches/index.js";
import { startPrivateCluster, startPrivateRedis } from "../src/demo/private-redis.js";
import { ROWS_PER_JOB } from "../src/pipeline/index.js";
import { hashTaggedPrefix } from "../src/redis/index.js";
import { bareQueueLoop } from "./lib/bare-queue-loop.js";
import { plainCreateLoop } from "./lib/plain-create-loop.js";
import {
  cpuSecondsOf,
  type Proc,
  peakRssOf,
  samplePeak,
  startPayouts,
  stopProcess,
  waitForOutput,
} from "./lib/processes.js";
import { writeE2eSheet } from "./lib/write-bench-sheets.js";

const USAGE =
  "usage: bench:e2e [-- --rows N --workers 1,2,3 --concurrency C --rate R --sheet usd|mixed --no-plain --cluster --cpu-prof DIR]\n" +
  "  --rows N         rows in the generated sheet (default 100000)\n" +
  "  --workers LIST   worker process counts, one whole run each (default 1)\n" +
  "  --concurrency C  WORKER_CONCURRENCY of each worker (default 32)\n" +
  "  --rate R         the sandbox and the tool both at R requests a second (default: no limit)\n" +
  "  --sheet KIND     usd (no FX quotes) or mixed (default: usd with --rate, else mixed)\n" +
  "  --no-plain       skip the bare loops (undici creates, BullMQ jobs) and what compares with them\n" +
  "  --cluster        a private 3-master Redis Cluster instead of one redis-server\n" +
  "  --cpu-prof DIR   V8 CPU profiles of the sandbox, serve, submit and each worker, written into DIR when they stop\n" +
  "  --timeout-s S    give up after S seconds (default 7200)\n";

function parseBenchArgs() {
  try {
    return parseArgs({
      options: {
        rows: { type: "string", default: "100000" },
        workers: { type: "string", default: "1" },
        concurrency: { type: "string", default: "32" },
        rate: { type: "string" },
        sheet: { type: "string" },
        "no-plain": { type: "boolean", default: false },
        "timeout-s": { type: "string", default: "7200" },
        cluster: { type: "boolean", default: false },
        "cpu-prof": { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (err) {
    // An unknown option or a missing value: say which, with the usage, not a stack trace.
    process.stderr.write(`${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

const { values } = parseBenchArgs();
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const ROWS = Number(values.rows);
const CONCURRENCY = Number(values.concurrency);
const WORKER_COUNTS = String(values.workers)
  .split(",")
  .map((w) => Number(w.trim()));
const TIMEOUT_MS = Number(values["timeout-s"]) * 1000;
const RATE = values.rate === undefined ? undefined : Number(values.rate);
const USD_ONLY = (values.sheet ?? (RATE === undefined ? "mixed" : "usd")) === "usd";
if (
  (RATE !== undefined && !(Number.isInteger(RATE) && RATE >= 1)) ||
  (values.sheet !== undefined && values.sheet !== "usd" && values.sheet !== "mixed") ||
  !Number.isInteger(ROWS) ||
  ROWS < 1 ||
  !Number.isInteger(CONCURRENCY) ||
  CONCURRENCY < 1 ||
  WORKER_COUNTS.some((w) => !Number.isInteger(w) || w < 1 || w > 8)
) {
  process.stderr.write(USAGE);
  process.exit(2);
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const say = (line: string) => process.stdout.write(`${line}\n`);
const mark = (ok: boolean) => (ok ? "ok" : "MISSED");

/** Node's flags for a V8 CPU profile of a process when `--cpu-prof DIR` is given. */
function profileArgs(): string[] {
  const dir = values["cpu-prof"];
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(dir)}`] : [];
}

interface SandboxProc extends Proc {
  url: string;
  apiKey: string;
}

async function startSandboxProc(): Promise<SandboxProc & { exited: Promise<unknown> }> {
  const proc = startPayouts(
    "sandbox",
    ["sandbox", "--port", "0"],
    { LOG_LEVEL: "warn" },
    undefined,
    profileArgs(),
  );
  const url = await waitForOutput(proc, /base URL\s+(http\S+)/);
  const apiKey = await waitForOutput(proc, /API key\s+(\S+)/);
  return Object.assign(proc, { url, apiKey });
}

/** Limits the sandbox to `rate` requests a second (a fault option: 429 beyond). */
async function limitSandbox(sandbox: SandboxProc, rate: number): Promise<void> {
  const res = await fetch(`${sandbox.url}/_sandbox/faults`, {
    method: "PUT",
    headers: { "api-key": sandbox.apiKey, "content-type": "application/json" },
    body: JSON.stringify({ rateLimitPerSecond: rate }),
  });
  if (!res.ok) throw new Error(`the sandbox refused rateLimitPerSecond ${rate}: ${res.status}`);
}

/** The sandbox's request counters by kind, if this sandbox has them (`GET /v2/_sandbox/stats`). */
interface SandboxFigures {
  requests?: Record<string, number>;
  webhooks?: { sending: number; waiting: number };
}

async function sandboxFigures(sandbox: SandboxProc): Promise<SandboxFigures | undefined> {
  try {
    const res = await fetch(`${sandbox.url}/_sandbox/stats`, { headers: { "api-key": sandbox.apiKey } });
    if (!res.ok) return undefined;
    return (await res.json()) as SandboxFigures;
  } catch {
    return undefined;
  }
}

async function requestCounts(sandbox: SandboxProc): Promise<Record<string, number> | undefined> {
  return (await sandboxFigures(sandbox))?.requests;
}

interface RunFigures {
  workers: number;
  rowsPerSec: number;
}

/**
 * One measured run. A benchmark script, kept in one piece so that what is timed (and what is not) reads
 * top to bottom; its `finally` stops every process started in it.
 */
async function runOnce(workerCount: number, bare: BareFigures | undefined): Promise<RunFigures> {
  const plainRate = bare?.rate;
  say(`\n== ${fmt(ROWS)} rows, ${workerCount} worker process(es), concurrency ${CONCURRENCY} ==`);
  const dataDir = await mkdtemp(path.join(tmpdir(), "payouts-e2e-"));
  const redis = await startBenchRedis(dataDir);
  const procs: Proc[] = [];
  const redisProc = { name: "redis-server", peakRss: 0, pid: redis.pid };
  const probe = redis.probe;
  const sheet = path.join(dataDir, "bench-e2e.csv");
  await writeE2eSheet(sheet, ROWS, USD_ONLY);
  try {
    const sandbox = await startSandboxProc();
    procs.push(sandbox);
    if (RATE !== undefined) await limitSandbox(sandbox, RATE);
    const env = {
      ...redis.env,
      PAYOUTS_API_URL: sandbox.url,
      PAYOUTS_API_KEY: sandbox.apiKey,
      DATA_DIR: dataDir,
      PAYOUTS_RATE_LIMIT_PER_SECOND: String(RATE ?? 100_000),
      WORKER_CONCURRENCY: String(CONCURRENCY),
      LOG_LEVEL: "info",
    };
    const profile = profileArgs();
    const serve = startPayouts("serve", ["serve", "--port", "0"], env, undefined, profile);
    procs.push(serve);
    const serveUrl = await waitForOutput(serve, /listening on (http\S+)/);
    const setup = startPayouts("webhook", ["webhook", "setup", "--url", `${serveUrl}/webhooks/payouts`], env);
    if ((await setup.exited) !== 0) throw new Error(`webhook setup failed: ${setup.stdout()}`);

    // Result-file writes, the reconciler's and the audit's reads, and the batch's end, from the
    // workers' JSON logs.
    let writes = 0;
    let writeMs = 0;
    let finishedAt: number | undefined;
    const reads = { lookPages: 0, lookGets: 0, looks: 0, auditPages: 0, watchPages: 0 };
    let ledgerLine: string | undefined;
    const onWorkerLine = (line: string) => {
      if (!line.startsWith("{")) return;
      try {
        const entry = JSON.parse(line) as {
          msg?: string;
          ms?: number;
          level?: number;
          pages?: number;
          gets?: number;
          watchPages?: number;
          summary?: string;
        };
        if (entry.msg === "result file written") {
          writes++;
          writeMs += entry.ms ?? 0;
        } else if (entry.msg === "reconcile look") {
          reads.looks++;
          reads.lookPages += entry.pages ?? 0;
          reads.lookGets += entry.gets ?? 0;
        } else if (entry.msg === "reconcile sweep") {
          reads.watchPages += entry.watchPages ?? 0;
        } else if (entry.msg === "ledger audit") {
          reads.auditPages += entry.pages ?? 0;
          ledgerLine = entry.summary;
        } else if (entry.msg === "batch finished") finishedAt ??= performance.now();
        else if ((entry.level ?? 0) >= 50) process.stderr.write(`[worker] ${line}\n`);
      } catch {
        // not a log line
      }
    };
    const workers = Array.from({ length: workerCount }, (_, i) =>
      startPayouts(
        `worker-${i + 1}`,
        ["worker", "--concurrency", String(CONCURRENCY)],
        env,
        onWorkerLine,
        profile,
      ),
    );
    procs.push(...workers);
    await sleep(1500);
    const before = Number(/used_memory:(\d+)/.exec(await probe.info("memory"))?.[1] ?? 0);
    const countsBefore = await requestCounts(sandbox);

    const commandsBefore = commandCalls(await probe.info("commandstats"));
    const bytesBefore = netBytes(await probe.info("stats"));
    const cpuBefore = await Promise.all([
      ...procs.map((p) => cpuSecondsOf(p.child.pid)),
      cpuSecondsOf(redis.pid),
    ]);
    const t0 = performance.now();
    const submit = startPayouts("submit", ["submit", sheet], env, undefined, profile);
    let submitPeak = 0;
    let redisPeak = before;
    const store = redis.store;
    let batchId: string | undefined;
    let lastSay = 0;
    const deadline = Date.now() + TIMEOUT_MS;
    for (;;) {
      submitPeak = Math.max(submitPeak, await peakRssOf(submit.child.pid));
      const mem = Number(/used_memory:(\d+)/.exec(await probe.info("memory"))?.[1] ?? 0);
      redisPeak = Math.max(redisPeak, mem);
      for (const p of procs) await samplePeak(p);
      if (!batchId && submit.child.exitCode !== null) {
        batchId = /\b(b\d{8}T\d{6}-[0-9a-f]+)\b/.exec(submit.stdout())?.[1];
        if (!batchId) throw new Error(`submit printed no batch id (exit ${submit.child.exitCode})`);
        say(`submit:   ${((performance.now() - t0) / 1000).toFixed(1)} s, peak RSS ${mb(submitPeak)}`);
      }
      if (batchId) {
        const progress = await store.progress(batchId);
        if (progress && finishedAt !== undefined) break;
        if (progress && performance.now() - lastSay > Number(process.env.BENCH_SAY_MS ?? 15_000)) {
          lastSay = performance.now();
          // Deliveries the sandbox holds for serve: a growing number means serve is behind.
          const webhooks = (await sandboxFigures(sandbox))?.webhooks;
          say(
            `  ${((performance.now() - t0) / 1000).toFixed(0)} s: ${fmt(progress.done)} final, ` +
              `${fmt(progress.counts.queued)} queued, ${fmt(progress.counts.submitted)} submitted, ` +
              `${fmt(progress.counts["in-progress"])} in progress; redis ${mb(mem)}; ` +
              `${webhooks ? `deliveries waiting in the sandbox ${fmt(webhooks.waiting)}; ` : ""}load ${loadavg()[0]!.toFixed(1)}`,
          );
        }
      }
      if (Date.now() > deadline) throw new Error("the batch did not finish in time");
      await sleep(500);
    }
    const commandsAfter = commandCalls(await probe.info("commandstats"));
    const bytesAfter = netBytes(await probe.info("stats"));
    const cpuAfter = await Promise.all([
      ...procs.map((p) => cpuSecondsOf(p.child.pid)),
      cpuSecondsOf(redis.pid),
    ]);
    const totalMs = finishedAt! - t0;
    const rowsPerSec = (ROWS / totalMs) * 1000;
    const progress = await store.progress(batchId!);
    // The worker holds the finished batch against the ledger (payouts audit) right after it wrote the
    // final result file: its reads and CPU are counted apart from the batch's. The audit's first pages
    // can be read before this process gets to ask the sandbox for its counts, so the counts are taken
    // once the audit is done and its pages (the worker logs them) taken off.
    for (let waited = 0; ledgerLine === undefined && waited < 120_000; waited += 250) await sleep(250);
    const countsAfterAudit = await requestCounts(sandbox);
    const countsAtFinish: Record<string, number> | undefined = countsAfterAudit && {
      ...countsAfterAudit,
      list: (countsAfterAudit.list ?? 0) - reads.auditPages,
      total: (countsAfterAudit.total ?? 0) - reads.auditPages,
    };
    const auditMs = performance.now() - finishedAt!;
    const cpuAfterAudit = await Promise.all([
      ...procs.map((p) => cpuSecondsOf(p.child.pid)),
      cpuSecondsOf(redis.pid),
    ]);
    await sleep(1000);
    const after = Number(/used_memory:(\d+)/.exec(await probe.info("memory"))?.[1] ?? 0);
    for (const p of procs) await samplePeak(p);
    redisProc.peakRss = await peakRssOf(redis.pid);

    say(
      `done:     every row final and the final result file written in ${(totalMs / 1000).toFixed(1)} s ` +
        `(completed ${fmt(progress?.counts.completed ?? 0)}, failed ${fmt(progress?.counts.failed ?? 0)}, ` +
        `returned ${fmt(progress?.counts.returned ?? 0)}, rejected ${fmt(progress?.counts.rejected ?? 0)}, ` +
        `error ${fmt(progress?.counts.error ?? 0)})`,
    );
    say(`rate:     ${fmt(rowsPerSec)} rows/s end to end`);
    if (plainRate !== undefined) {
      const ratio = rowsPerSec / plainRate;
      say(
        `ratio:    ${ratio.toFixed(2)} of the bare loop (${fmt(plainRate)}/s)   target >= 0.35 at 100k: ${mark(ratio >= 0.35)}`,
      );
    }
    if (RATE !== undefined) {
      const floor = ROWS / RATE;
      const ratio = (floor * 1000) / totalMs;
      const target = ROWS >= 100_000 ? 0.85 : 0.8;
      say(
        `wall:     ${(totalMs / 1000).toFixed(1)} s against N/R = ${floor.toFixed(1)} s at ${RATE} req/s: ` +
          `${ratio.toFixed(2)}× N/R   target >= ${target}: ${mark(ratio >= target)}`,
      );
    }
    if (countsBefore && countsAtFinish) {
      // The batch's own requests (the audit's are below).
      const count = (kind: string) => (countsAtFinish[kind] ?? 0) - (countsBefore[kind] ?? 0);
      const per = (kind: string) => count(kind) / ROWS;
      const kinds = ["create", "get", "list", "quote", "other", "rateLimited"];
      say(`requests: per row ${kinds.map((k) => `${k} ${per(k).toFixed(3)}`).join(", ")}`);
      const total = count("total");
      const beyondQuotes = (total - count("quote")) / ROWS;
      say(
        `          per row but FX quotes ${beyondQuotes.toFixed(3)}${USD_ONLY ? " (every row USD)" : ""}   ` +
          `target <= 1.05: ${mark(beyondQuotes <= 1.05)}; 429 answers ${((count("rateLimited") / Math.max(1, total)) * 100).toFixed(2)}% of requests   target < 2%: ${mark(count("rateLimited") < 0.02 * total)}`,
      );
      const reconcileReads = (reads.lookPages + reads.lookGets) / ROWS;
      say(
        `          reconcile reads per row ${reconcileReads.toFixed(3)} (${fmt(reads.lookPages)} pages, ${fmt(reads.lookGets)} single GETs, ${fmt(reads.looks)} looks)   ` +
          `target <= 0.05: ${mark(reconcileReads <= 0.05)}`,
      );
      // The tool's own processes (not the sandbox, the first one): what the audit added.
      const toolCpu = (cpu: number[]) => cpu.slice(1).reduce((sum, s) => sum + s, 0);
      say(
        `audit:    ${ledgerLine ?? "no ledger audit logged"}: ${fmt(reads.auditPages)} pages (${(reads.auditPages / ROWS).toFixed(3)} per row), ` +
          `${(auditMs / 1000).toFixed(1)} s after the batch finished, ${(((toolCpu(cpuAfterAudit) - toolCpu(cpuAfter)) / ROWS) * 1000).toFixed(2)} s of CPU per 1,000 rows`,
      );
    } else {
      say("requests: n/a (this sandbox has no request counters)");
    }
    const peakPerRow = (redisPeak - before) / ROWS;
    const afterPerRow = (after - before) / ROWS;
    say(
      `redis:    used_memory per row ${fmt(peakPerRow)} B at peak, ${fmt(afterPerRow)} B after   ` +
        `target <= 1 KB in flight: ${mark(peakPerRow <= 1024)}`,
    );
    const rss = [
      ...procs.map((p) => ({ name: p.name, peak: p.peakRss })),
      { name: "submit", peak: submitPeak },
      { name: "redis-server", peak: redisProc.peakRss },
    ];
    say(
      `rss:      ${rss.map((r) => `${r.name} ${mb(r.peak)}`).join(", ")}   ` +
        // The sandbox keeps every payment in memory as the service would, and Redis holds the rows
        // by design (its own line above): the budget is the tool's processes'.
        `target < 300 MB each of the tool's: ${mark(
          rss.every((r) => r.name === "sandbox" || r.name === "redis-server" || r.peak < 300 * 1024 * 1024),
        )}`,
    );
    const perRowCalls = [...commandsAfter]
      .map(([cmd, n]) => [cmd, (n - (commandsBefore.get(cmd) ?? 0)) / ROWS] as const)
      .sort((a, b) => b[1] - a[1]);
    say(
      `commands: ${perRowCalls.reduce((sum, [, n]) => sum + n, 0).toFixed(1)} Redis commands per row: ${perRowCalls
        .slice(0, 8)
        .map(([cmd, n]) => `${cmd} ${n.toFixed(2)}`)
        .join(", ")}`,
    );
    say(
      `          ${fmt((bytesAfter.sent - bytesBefore.sent) / ROWS)} bytes sent to Redis per row, ` +
        `${fmt((bytesAfter.received - bytesBefore.received) / ROWS)} received`,
    );
    // CPU per 1,000 rows from submit to the end (the load of other processes on the machine does not
    // inflate it the way it inflates wall time).
    const cpuNames = [...procs.map((p) => p.name), "redis-server"];
    const toolCpuPerRow =
      cpuNames.reduce((sum, name, i) => sum + (name === "sandbox" ? 0 : cpuAfter[i]! - cpuBefore[i]!), 0) /
      ROWS;
    say(
      `cpu:      per 1,000 rows ${cpuNames
        .map((name, i) => `${name} ${(((cpuAfter[i]! - cpuBefore[i]!) / ROWS) * 1000).toFixed(2)} s`)
        .join(", ")}`,
    );
    say(`          the tool (serve, workers, redis): ${(toolCpuPerRow * 1000).toFixed(2)} s per 1,000 rows`);
    if (bare) {
      // The parts every row costs whatever the tool does (its share of a BullMQ job carrying
      // ROWS_PER_JOB rows, its create): the rest of the tool's figure is its own work, the only part
      // code here can make cheaper.
      const floor = bare.jobSeconds / ROWS_PER_JOB + bare.createSeconds;
      say(
        `          of which the bare parts (1/${ROWS_PER_JOB} of a BullMQ job, an undici create) ${(floor * 1000).toFixed(2)} s, ` +
          `the tool's own work ${((toolCpuPerRow - floor) * 1000).toFixed(2)} s`,
      );
    }
    // What the machine allows at this CPU cost: every process here shares its cores, so even with each
    // core busy all the time the rate cannot exceed cores / (CPU seconds per row, all processes). This
    // is why the ratio target is out of reach on 2 cores: the bare loop only creates payments, while a
    // row also costs the sandbox its webhooks and GET, and costs serve, the worker and Redis their share.
    const cpuPerRow = cpuNames.reduce((sum, _, i) => sum + (cpuAfter[i]! - cpuBefore[i]!), 0) / ROWS;
    const cores = cpus().length;
    const ceiling = cores / cpuPerRow;
    say(
      `ceiling:  ${(cpuPerRow * 1000).toFixed(2)} s of CPU per 1,000 rows on ${cores} cores: at most ${fmt(ceiling)} rows/s` +
        (plainRate !== undefined ? ` = ${(ceiling / plainRate).toFixed(2)} of the bare loop` : "") +
        `; this run used ${((rowsPerSec / ceiling) * 100).toFixed(0)}% of it`,
    );
    const share = writeMs / (totalMs * workerCount);
    say(
      `results:  ${writes} result-file writes, ${(writeMs / 1000).toFixed(1)} s = ${(share * 100).toFixed(1)}% of the workers' time`,
    );
    say(
      `load:     ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")} (shared machine: figures are noisy)`,
    );
    return { workers: workerCount, rowsPerSec };
  } finally {
    for (const p of procs.reverse()) await stopProcess(p);
    await redis.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Calls per command from INFO commandstats (`cmdstat_evalsha:calls=12,...`). */
function commandCalls(info: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(m[1]!, Number(m[2]));
  return calls;
}

/** Bytes Redis read from and wrote to its clients so far (INFO stats), seen from the clients' side. */
function netBytes(info: string): { sent: number; received: number } {
  const read = (field: string) => Number(new RegExp(`^${field}:(\\d+)`, "m").exec(info)?.[1] ?? 0);
  return { sent: read("total_net_input_bytes"), received: read("total_net_output_bytes") };
}

interface BenchRedis {
  /** REDIS_URL, and REDIS_CLUSTER_NODES on a cluster, for every process. */
  env: Record<string, string>;
  /** The server holding the installation's keys (for used_memory). */
  probe: Redis;
  pid: number | undefined;
  store: BatchStore;
  stop(): Promise<void>;
}

/** A private redis-server, or with --cluster a 3-master cluster measured at the master of `{payouts}`. */
async function startBenchRedis(dataDir: string): Promise<BenchRedis> {
  if (!values.cluster) {
    const redis = await startPrivateRedis();
    const probe = new Redis(redis.url, { maxRetriesPerRequest: null });
    return {
      env: { REDIS_URL: redis.url },
      probe,
      pid: redis.pid,
      store: new BatchStore(probe),
      stop: async () => {
        probe.disconnect();
        await redis.stop();
      },
    };
  }
  const cluster = await startPrivateCluster(dataDir);
  const client = new Cluster(cluster.ports.map((port) => ({ host: "127.0.0.1", port })));
  const prefix = hashTaggedPrefix(DEFAULT_KEY_PREFIX);
  const slot = Number(await client.cluster("KEYSLOT", prefix));
  const ranges = await client.cluster("SLOTS");
  const port = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2]?.[1];
  const index = cluster.ports.indexOf(Number(port));
  const probe = new Redis({ host: "127.0.0.1", port: Number(port), maxRetriesPerRequest: null });
  say(`redis:    3-master cluster on ${cluster.ports.join(", ")}; ${prefix} is slot ${slot}, on ${port}`);
  return {
    env: {
      REDIS_URL: `redis://127.0.0.1:${port}`,
      REDIS_CLUSTER_NODES: cluster.ports.map((p) => `127.0.0.1:${p}`).join(","),
    },
    probe,
    pid: cluster.nodes[index]?.pid,
    store: new BatchStore(client, { prefix }),
    stop: async () => {
      probe.disconnect();
      client.disconnect();
      await cluster.stop();
    },
  };
}

/** What the bare loops measured: the creates' rate, and the CPU per row of the parts every row costs. */
interface BareFigures {
  rate: number;
  /** CPU seconds of one undici create (the client side alone). */
  createSeconds: number;
  /** CPU seconds of one BullMQ job (this process and redis-server). */
  jobSeconds: number;
}

/**
 * The bare loops: N creates against a fresh sandbox, nothing else; then N do-nothing BullMQ jobs.
 * Together, what one row costs before the tool does anything of its own.
 */
async function bareLoops(): Promise<BareFigures> {
  const sandbox = await startSandboxProc();
  let rate: number;
  let createSeconds: number;
  try {
    const run = randomBytes(3).toString("hex");
    const cpu0 = process.cpuUsage();
    const { created, failed, ms } = await plainCreateLoop({
      url: sandbox.url,
      apiKey: sandbox.apiKey,
      concurrency: CONCURRENCY,
      count: ROWS,
      row: (i) => ({
        reference: `PLAIN-${run}-${i}`,
        rowKey: `PLAIN-${run}-${i}`,
        amount: 10_000 + (i % 5000) * 10,
        currency: "USD",
        originatingAccountId: "acct_ops_checking",
        receivingAccountId: "acct_vendor_ach",
        deliveryPreference: "standard-ach",
        recipientNote: "bench",
      }),
    });
    const cpu = process.cpuUsage(cpu0);
    rate = (created / ms) * 1000;
    createSeconds = (cpu.user + cpu.system) / 1e6 / ROWS;
    say(
      `plain:    ${fmt(created)} payments in ${(ms / 1000).toFixed(1)} s = ${fmt(rate)}/s (failed ${failed}), ` +
        `${(createSeconds * 1e6).toFixed(0)} µs of client CPU each`,
    );
  } finally {
    await stopProcess(sandbox);
  }
  const queue = await bareQueueLoop(ROWS, CONCURRENCY);
  const jobSeconds = queue.clientSecondsPerJob + queue.redisSecondsPerJob;
  say(
    `bare jobs: ${fmt(ROWS)} do-nothing BullMQ jobs, ${(queue.clientSecondsPerJob * 1e6).toFixed(0)} µs of CPU each ` +
      `+ ${(queue.redisSecondsPerJob * 1e6).toFixed(0)} µs of redis-server`,
  );
  return { rate, createSeconds, jobSeconds };
}

say(
  `bench:e2e  rows ${fmt(ROWS)}  workers ${WORKER_COUNTS.join(",")}  concurrency ${CONCURRENCY}  ` +
    `${RATE !== undefined ? `rate ${RATE} req/s  ` : ""}sheet ${USD_ONLY ? "usd" : "mixed"}  ` +
    `${values.cluster ? "redis cluster  " : ""}` +
    `load ${loadavg()[0]!.toFixed(1)}`,
);
// The bare loop against a rate-limited service would measure the limit, not the loop.
const bare = values["no-plain"] || RATE !== undefined ? undefined : await bareLoops();
const figures: RunFigures[] = [];
for (const w of WORKER_COUNTS) figures.push(await runOnce(w, bare));
if (figures.length > 1) {
  say(`\nscale-out: ${figures.map((f) => `${f.workers} worker(s) ${fmt(f.rowsPerSec)} rows/s`).join(", ")}`);
}
