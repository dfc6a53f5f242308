/** `payouts sandbox`: the simulated Partner Payouts Service on its own. */

import { loadDefaultSeed, loadSeed, startSandbox } from "@payouts/sandbox";
import type { Command } from "commander";
import { keepHeapLean } from "../lean-heap.js";
import { parsePort } from "../options.js";
import { untilShutdownSignal } from "../signals.js";

export function registerSandbox(program: Command): void {
  program
    .command("sandbox")
    .description("Run the simulated Partner Payouts Service (in memory; no real money moves)")
    .option("--port <n>", "port to listen on (0 picks a free one)", parsePort, 8080)
    .option("--host <address>", "address to listen on", "127.0.0.1")
    .option("--seed <file>", "seed file (entity, accounts, API keys); default samples/sandbox-seed.json")
    .action(async (opts: { port: number; host: string; seed?: string }) => {
      // Its payments live in typed arrays; what is on the heap is mostly requests and deliveries in
      // flight, short-lived garbage that V8's default growth lets reach several times the live size.
      keepHeapLean();
      const stopSignal = untilShutdownSignal();
      const seed = opts.seed ? await loadSeed(opts.seed) : await loadDefaultSeed();
      const sandbox = await startSandbox({ port: opts.port, host: opts.host, seed });
      process.stdout.write(
        [
          "SANDBOX: a simulated Partner Payouts Service. State is in memory; no real money moves.",
          `  base URL   ${sandbox.url}`,
          `  API key    ${sandbox.apiKey}   (a sandbox-only key from the seed, not a secret)`,
          `  entity     ${sandbox.entityId}  (also reachable as "me")`,
          "  Point the tool at it with:",
          `    export PAYOUTS_API_URL=${sandbox.url} PAYOUTS_API_KEY=${sandbox.apiKey}`,
          "Press Ctrl-C to stop.",
          "",
        ].join("\n"),
      );
      await stopSignal;
      await sandbox.close();
    });
}
