/** `payouts demo [sheet]`: the whole job on embedded defaults (see src/demo/run-demo.ts). */
import cliProgress from "cli-progress";
import type { Command } from "commander";
import { type BatchProgress, DEFAULT_KEY_PREFIX } from "../../batches/index.js";
import { loadConfig } from "../../config/index.js";
import { RedisUnavailableError } from "../../demo/private-redis.js";
import { CliError, EXIT } from "../exit-codes.js";
import { keepHeapLean } from "../lean-heap.js";
import { parsePort } from "../options.js";
import { requireRedis } from "../redis-check.js";
import { signalExitCode, untilShutdownSignal } from "../signals.js";

/** How long the demo may take to stop once asked (its parts get a few seconds each). */
const DEMO_STOP_GRACE_MS = 20_000;

export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description(
      "Run the whole job on embedded defaults: sandbox (unless PAYOUTS_API_URL), Redis (REDIS_URL or a private redis-server), workers and webhook server in-process; submit the sample sheet, wait until every row is final, write the result file",
    )
    .argument("[sheet]", "the payout sheet to run (default: samples/payouts-valid.csv)")
    .option("--port <n>", "port of the console and API (default: a free one)", parsePort)
    .option("--stay", "keep the console, API and workers running after the result, until Ctrl-C")
    .action(async (sheet: string | undefined, opts: { port?: number; stay?: boolean }) => {
      // The sandbox, workers and server of `sandbox`, `worker` and `serve` in one process.
      keepHeapLean();
      const say = (line: string) => process.stdout.write(`${line}\n`);
      const bar = process.stdout.isTTY
        ? new cliProgress.SingleBar(
            { format: "  {bar} {value}/{total} rows final  {states}", hideCursor: true },
            cliProgress.Presets.shades_classic,
          )
        : undefined;
      let started = false;
      const progress = bar
        ? (p: BatchProgress) => {
            const states = Object.entries(p.counts)
              .filter(([, n]) => n > 0)
              .map(([s, n]) => `${s} ${n}`)
              .join(", ");
            if (!started) bar.start(p.batch.rowCount, p.done, { states });
            started = true;
            bar.update(p.done, { states });
          }
        : undefined;
      const config = loadConfig();
      // The demo keeps its keys under the plain prefix on one Redis (often its own private one).
      if (config.redisClusterNodes) {
        throw new CliError(
          "payouts demo runs on a single Redis: unset REDIS_CLUSTER_NODES (the other commands use the cluster)",
          EXIT.usage,
        );
      }
      // runDemo stops its parts in order on the first signal; past this grace (or on a second signal)
      // the process ends anyway, so nothing it waits on (a service gone mid-way) keeps it up for good.
      untilShutdownSignal({ graceMs: DEMO_STOP_GRACE_MS });
      // A given Redis that does not answer is one line and exit 2 now, before anything starts.
      if (config.redisUrlGiven) await requireRedis(config, { prefix: DEFAULT_KEY_PREFIX });
      try {
        const { runDemo } = await import("../../demo/run-demo.js");
        const result = await runDemo({
          config,
          ...(sheet === undefined ? {} : { sheetPath: sheet }),
          ...(opts.port === undefined ? {} : { port: opts.port }),
          stay: opts.stay === true,
          say: (line) => {
            if (started) {
              bar?.stop();
              started = false;
            }
            say(line);
          },
          ...(progress ? { progress } : {}),
        });
        bar?.stop();
        if (!result.ok) {
          process.stderr.write(`payouts demo: ${result.reason}\n`);
          // Stopped by a signal: the shell's convention, 128 + the signal's number.
          process.exitCode = result.stoppedBy ? signalExitCode(result.stoppedBy) : EXIT.inputProblems;
        }
      } catch (err) {
        bar?.stop();
        if (err instanceof RedisUnavailableError) throw new CliError(err.message, EXIT.usage);
        throw err;
      }
    });
}
