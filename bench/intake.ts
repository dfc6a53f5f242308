/**
 * Intake benchmark (`npm run bench:intake`): generates payout sheets of 25,000, 50,000
 * and 100,000 rows (CSV and XLSX), then reads and validates each against the in-process sandbox and
 * prints rows/s and peak RSS beside the targets. Figures only: it never fails on a missed target.
 *
 * Each (size, format) runs in a fresh child process (this script with `--child`), so the peak RSS of one
 * run cannot leak into the next and a size's figure is that size's alone.
 *
 *   node dist/bench/intake.js [--sizes 25000,50000,100000 | --rows N] [--formats csv,xlsx]
 *                             [--shared-strings on|off] [--faster-every N] [--reuse-sheets]
 *                             [--cpu-prof] [--out DIR]
 */
import { spawn } from "node:child_process";
import { mkdir, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startSandbox } from "@payouts/sandbox";
import type { Problem } from "../src/intake/problems.js";
import { validateSheet } from "../src/intake/validate-sheet.js";
import { createPayoutsClient } from "../src/payouts-api/index.js";
import {
  type BenchFormat,
  formatFlatness,
  formatIntakeTable,
  INTAKE_TARGETS,
  type IntakeMeasurement,
} from "./lib/intake-report.js";
import { startRssSampler } from "./lib/rss-sampler.js";
import { writeBenchCsv, writeBenchXlsx } from "./lib/write-bench-sheets.js";

const SCRIPT = fileURLToPath(import.meta.url);
/** dist/bench/intake.js → the repository root, where bench/out lives. */
const REPO_ROOT = path.resolve(path.dirname(SCRIPT), "..", "..");
const RESULT_PREFIX = "INTAKE_BENCH_RESULT ";
const DEFAULT_SIZES = [25_000, 50_000, 100_000];

const { values: args } = parseArgs({
  options: {
    rows: { type: "string" },
    sizes: { type: "string" },
    formats: { type: "string", default: "csv,xlsx" },
    "shared-strings": { type: "string", default: "on" },
    "faster-every": { type: "string", default: "0" },
    "reuse-sheets": { type: "boolean", default: false },
    "cpu-prof": { type: "boolean", default: false },
    out: { type: "string" },
    child: { type: "boolean", default: false },
    file: { type: "string" },
    format: { type: "string" },
  },
  strict: true,
});

if (args.child) {
  await runChild();
} else {
  await runParent();
}

async function runParent(): Promise<void> {
  const sizes = args.rows ? [positiveInt(args.rows, "--rows")] : parseSizes(args.sizes);
  const formats = parseFormats(args.formats ?? "csv,xlsx");
  const sharedStrings = parseOnOff(args["shared-strings"] ?? "on", "--shared-strings");
  const fasterEvery = nonNegativeInt(args["faster-every"] ?? "0", "--faster-every");
  const outDir = path.resolve(args.out ?? path.join(REPO_ROOT, "bench", "out"));
  await mkdir(outDir, { recursive: true });

  console.log(
    "Intake benchmark: read + validate (validateSheet with the client) against the in-process sandbox",
  );
  console.log(
    `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  console.log(
    `sheets: ${sizes.map((s) => s.toLocaleString("en-US")).join(", ")} rows; formats ${formats.join(", ")}; ` +
      `XLSX shared strings ${sharedStrings ? "ON (as Excel writes)" : "OFF (inline strings)"}; ` +
      (fasterEvery > 0
        ? `every ${fasterEvery}th row a faster variant (one eligibility-tool call each)`
        : "standard delivery only (no eligibility-tool calls)"),
  );
  console.log(
    `each size and format runs in a fresh child process; sheets in ${path.relative(process.cwd(), outDir) || "."}`,
  );
  console.log("");

  const results: IntakeMeasurement[] = [];
  for (const rows of sizes) {
    for (const format of formats) {
      const file = path.join(outDir, sheetName(rows, format, sharedStrings, fasterEvery));
      if (!(args["reuse-sheets"] && (await exists(file)))) {
        const started = performance.now();
        if (format === "csv") await writeBenchCsv(file, rows, { fasterEvery });
        else await writeBenchXlsx(file, rows, { fasterEvery, sharedStrings });
        console.log(
          `generated ${path.basename(file)} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
        );
      }
      const result = await measureInChild(file, format, rows, outDir);
      results.push(result);
      console.log(
        `measured  ${path.basename(file)}: ${Math.round(result.rowsRead / (result.totalMs / 1000)).toLocaleString("en-US")} rows/s, ` +
          `peak RSS ${(Math.max(result.rssSampledPeakBytes, result.maxRssBytes) / 1048576).toFixed(0)} MB`,
      );
      warnIfInvalid(result);
    }
  }

  console.log("");
  console.log(formatIntakeTable(results));
  console.log("");
  for (const line of formatFlatness(results)) console.log(line);
  console.log("");
  console.log(
    `targets (2-core machine): CSV >= ${INTAKE_TARGETS.csvRowsPerSecond.toLocaleString("en-US")} rows/s, ` +
      `XLSX >= ${INTAKE_TARGETS.xlsxRowsPerSecond.toLocaleString("en-US")} rows/s, peak RSS < 300 MB at 100,000 rows and flat as rows grow.`,
  );
  console.log(
    "rows/s = rows / wall time of validateSheet() (open, header, live data) plus iterating every validated row. " +
      "Peak RSS = max of 50 ms samples of process.memoryUsage().rss and process.resourceUsage().maxRSS of the child " +
      "(which also holds the sandbox server).",
  );
  for (const m of results) warnIfInvalid(m);
}

async function measureInChild(
  file: string,
  format: BenchFormat,
  rows: number,
  outDir: string,
): Promise<IntakeMeasurement> {
  const profileArgs = args["cpu-prof"]
    ? [
        "--cpu-prof",
        "--cpu-prof-dir",
        path.join(outDir, "profiles"),
        "--cpu-prof-name",
        `${path.basename(file)}.cpuprofile`,
      ]
    : [];
  const child = spawn(
    process.execPath,
    [...profileArgs, SCRIPT, "--child", "--file", file, "--format", format, "--rows", String(rows)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let stdout = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    stdout += chunk;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  const line = stdout.split("\n").find((l) => l.startsWith(RESULT_PREFIX));
  if (code !== 0 || !line) {
    throw new Error(`benchmark child for ${path.basename(file)} exited with ${code}; output:\n${stdout}`);
  }
  return JSON.parse(line.slice(RESULT_PREFIX.length)) as IntakeMeasurement;
}

async function runChild(): Promise<void> {
  const file = args.file;
  const format = args.format as BenchFormat | undefined;
  if (!file || (format !== "csv" && format !== "xlsx") || !args.rows) {
    throw new Error("--child needs --file, --format csv|xlsx and --rows");
  }
  const rows = positiveInt(args.rows, "--rows");
  const sandbox = await startSandbox();
  const api = createPayoutsClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    entityId: sandbox.entityId,
  });
  try {
    const sampler = startRssSampler(50);
    // CPU time beside wall time: on a shared machine wall time also counts other processes' turns.
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const validation = await validateSheet(file, { api });
    const openMs = performance.now() - started;
    let rowsRead = 0;
    let validRows = 0;
    const problemCounts: Record<string, number> = {};
    const firstProblems: string[] = [];
    for (const p of validation.sheetProblems) {
      problemCounts[p.code] = (problemCounts[p.code] ?? 0) + 1;
      firstProblems.push(describe(p));
    }
    for await (const validated of validation.rows) {
      rowsRead++;
      if (validated.instruction) {
        validRows++;
        continue;
      }
      for (const p of validated.problems) {
        problemCounts[p.code] = (problemCounts[p.code] ?? 0) + 1;
        if (firstProblems.length < 5) firstProblems.push(describe(p));
      }
    }
    const totalMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const peak = sampler.stop();
    const result: IntakeMeasurement = {
      format,
      rows,
      file,
      fileBytes: (await stat(file)).size,
      rowsRead,
      validRows,
      problemCounts,
      firstProblems,
      openMs,
      totalMs,
      cpuMs: (cpu.user + cpu.system) / 1000,
      rssStartBytes: peak.startBytes,
      rssSampledPeakBytes: peak.sampledPeakBytes,
      maxRssBytes: peak.maxRssBytes,
      heapUsedAfterBytes: process.memoryUsage().heapUsed,
    };
    process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
  } finally {
    await api.close();
    await sandbox.close();
  }
}

function describe(p: Problem): string {
  return `row ${p.row ?? "-"}, column ${p.column ?? "-"}: ${p.code}: ${p.message}`;
}

function warnIfInvalid(m: IntakeMeasurement): void {
  if (m.validRows === m.rows && m.rowsRead === m.rows) return;
  const bar = "!".repeat(78);
  console.error(bar);
  console.error(
    `!! WARNING: ${path.basename(m.file)}: ${m.validRows.toLocaleString("en-US")} of ${m.rowsRead.toLocaleString("en-US")} rows valid ` +
      `(${m.rows.toLocaleString("en-US")} written). Every generated row should be valid; the figures are not comparable.`,
  );
  console.error(`!! problems by code: ${JSON.stringify(m.problemCounts)}`);
  for (const p of m.firstProblems) console.error(`!!   ${p}`);
  console.error(bar);
}

function sheetName(rows: number, format: BenchFormat, sharedStrings: boolean, fasterEvery: number): string {
  const faster = fasterEvery > 0 ? `-faster${fasterEvery}` : "";
  const strings = format === "xlsx" ? (sharedStrings ? "-shared" : "-inline") : "";
  return `intake-${rows}${faster}${strings}.${format}`;
}

function parseSizes(text: string | undefined): number[] {
  if (!text) return DEFAULT_SIZES;
  return text.split(",").map((s) => positiveInt(s.trim().replace(/_/g, ""), "--sizes"));
}

function parseFormats(text: string): BenchFormat[] {
  const formats = text.split(",").map((s) => s.trim().toLowerCase());
  for (const f of formats)
    if (f !== "csv" && f !== "xlsx") throw new Error(`--formats: unknown format "${f}"`);
  return formats as BenchFormat[];
}

function parseOnOff(text: string, flag: string): boolean {
  if (text === "on") return true;
  if (text === "off") return false;
  throw new Error(`${flag} takes on or off, not "${text}"`);
}

function positiveInt(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n <= 0)
    throw new Error(`${flag}: "${text}" is not a positive whole number`);
  return n;
}

function nonNegativeInt(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${flag}: "${text}" is not a whole number >= 0`);
  return n;
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
