/**
 * Child processes of the end-to-end benchmark: the `payouts` commands run as in production, each in
 * its own process, and their peak resident memory read from the kernel (`VmHWM` in
 * /proc/<pid>/status: the high-water mark, so one read at the end gives the peak of the whole life).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const PAYOUTS_BIN = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../../bin/payouts.js",
);

export interface Proc {
  name: string;
  child: ChildProcess;
  /** Highest VmHWM seen (bytes); refreshed by {@link samplePeak}. */
  peakRss: number;
}

/**
 * Starts `payouts <args>`; `onLine` sees every line (JSON logs too); plain stdout text is collected.
 * `nodeArgs` go to node itself (e.g. `--cpu-prof`, which NODE_OPTIONS does not accept).
 */
export function startPayouts(
  name: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  onLine?: (line: string) => void,
  nodeArgs: readonly string[] = [],
): Proc & { stdout: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [...nodeArgs, PAYOUTS_BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  // Logs are JSON lines on stdout (pino); what a command prints for people may share it.
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (!line.startsWith("{")) out += `${line}\n`;
    onLine?.(line);
  });
  createInterface({ input: child.stderr! }).on("line", (line) => {
    if (onLine) onLine(line);
    else if (!line.startsWith("{")) process.stderr.write(`[${name}] ${line}\n`);
  });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  return { name, child, peakRss: 0, stdout: () => out, exited };
}

/** Waits until the process's stdout matches `pattern`; returns the first capture group. */
export async function waitForOutput(
  proc: { stdout: () => string; exited: Promise<unknown>; name: string },
  pattern: RegExp,
  timeoutMs = 30_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void proc.exited.then(() => {
    gone = true;
  });
  for (;;) {
    const m = pattern.exec(proc.stdout());
    if (m) return m[1] ?? m[0];
    if (gone) throw new Error(`${proc.name} exited before printing ${pattern}: ${proc.stdout()}`);
    if (Date.now() > deadline)
      throw new Error(`${proc.name} did not print ${pattern} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The kernel's peak RSS of a live process, in bytes (0 when it is gone or not Linux). */
export async function peakRssOf(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0;
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kb = /VmHWM:\s+(\d+)\s+kB/.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * CPU time a live process has used so far (user + system, seconds), from /proc/<pid>/stat; 0 when it
 * is gone or not Linux. On a shared machine this says more about the cost per row than wall time.
 */
export async function cpuSecondsOf(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0;
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces) start at ")"; utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** USER_HZ: 100 on every Linux we run on. */
const CLOCK_TICKS = 100;

export async function samplePeak(proc: Proc): Promise<void> {
  proc.peakRss = Math.max(proc.peakRss, await peakRssOf(proc.child.pid));
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
export async function stopProcess(proc: Proc, graceMs = 15_000): Promise<void> {
  const { child } = proc;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** `payouts sandbox --port 0` in its own process, with the URL and API key it printed. */
export async function startSandboxProcess(): Promise<
  Proc & { url: string; apiKey: string; stdout: () => string; exited: Promise<number | null> }
> {
  const proc = startPayouts("sandbox", ["sandbox", "--port", "0"], { LOG_LEVEL: "warn" });
  const url = await waitForOutput(proc, /base URL\s+(http\S+)/);
  const apiKey = await waitForOutput(proc, /API key\s+(\S+)/);
  return Object.assign(proc, { url, apiKey });
}
