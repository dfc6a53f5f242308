/** Real child processes of the built CLI (`node bin/payouts.js ...`, from dist/) for the crash tests. */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { trackChild } from "../../support/child-processes.js";

export const BIN = path.resolve("bin/payouts.js");

export interface CliProcess {
  child: ChildProcess;
  /** Every stdout and stderr line so far. */
  output: string[];
  /** Resolves with the first line (seen or to come) matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>;
}

export function spawnCli(args: string[], env: Record<string, string>): CliProcess {
  const child = trackChild(
    spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
  const output: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const onData = (buf: Buffer) => {
    for (const line of buf.toString("utf8").split("\n")) {
      if (line.trim() === "") continue;
      output.push(line);
      for (const w of [...waiters]) {
        if (w.pattern.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal ?? -1));
  });
  return {
    child,
    output,
    exited,
    waitFor(pattern, timeoutMs = 15_000) {
      const seen = output.find((l) => pattern.test(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(
            new Error(
              `no line matching ${pattern} within ${timeoutMs} ms; output:\n${output.slice(-20).join("\n")}`,
            ),
          );
        }, timeoutMs);
        waiters.push({
          pattern,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
        void exited.then(() => {
          clearTimeout(timer);
          reject(
            new Error(
              `process exited before a line matching ${pattern}; output:\n${output.slice(-20).join("\n")}`,
            ),
          );
        });
      });
    },
  };
}

/** Starts `payouts sandbox --port 0` and reads its URL and key from what it prints. */
export async function spawnSandbox(): Promise<{ proc: CliProcess; url: string; apiKey: string }> {
  const proc = spawnCli(["sandbox", "--port", "0"], {});
  const urlLine = await proc.waitFor(/base URL\s+http/);
  const keyLine = await proc.waitFor(/API key\s+\S+/);
  const url = /(http\S+)/.exec(urlLine)![1]!;
  const apiKey = /API key\s+(\S+)/.exec(keyLine)![1]!;
  return { proc, url, apiKey };
}

/** Sets sandbox faults over HTTP (the sandbox runs in another process). */
export async function setRemoteFaults(
  url: string,
  apiKey: string,
  faults: Record<string, unknown>,
): Promise<void> {
  const res = await fetch(`${url}/_sandbox/faults`, {
    method: "PUT",
    headers: { "api-key": apiKey, "content-type": "application/json" },
    body: JSON.stringify(faults),
  });
  if (!res.ok) throw new Error(`setting faults failed: ${res.status} ${await res.text()}`);
}

export async function stopProcess(
  proc: CliProcess,
  signal: NodeJS.Signals = "SIGTERM",
): Promise<number | string> {
  if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill(signal);
  return proc.exited;
}
