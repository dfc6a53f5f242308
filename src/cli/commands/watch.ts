/**
 * `payouts watch`: only the watched folder (DATA_DIR/inbox/), for a machine that takes sheets while
 * workers elsewhere pay them. Needs the API (validation) and Redis (the batches), like `submit`.
 * `payouts worker` runs the same watcher alongside the workers.
 */
import type { Command } from "commander";
import { assembleServices } from "../../app/index.js";
import { loadConfig, requireApi } from "../../config/index.js";
import { configSecrets, createLogger } from "../../logging/index.js";
import { DEFAULT_STABLE_MS, DEFAULT_WATCH_CONCURRENCY } from "../../watch/index.js";
import { parsePositiveInt, redisPrefixOption } from "../options.js";
import { REDIS_START_WAIT_MS, requireRedis } from "../redis-check.js";
import { abortOn, untilShutdownSignal } from "../signals.js";

/**
 * How long a stop may take: the sheet in hand finishes its submission first. Past this the process
 * ends anyway; a submission cut there is finished, never duplicated, when the sheet is resumed.
 */
const WATCH_STOP_GRACE_MS = 15_000;

interface WatchFlags {
  stableMs?: number;
  concurrency?: number;
  rescanMs: number;
  redisPrefix: string;
}

export function registerWatch(program: Command): void {
  program
    .command("watch")
    .description("Watch DATA_DIR/inbox/ and submit every sheet dropped there, until SIGINT/SIGTERM")
    .option(
      "--stable-ms <n>",
      `the quiet period: a file is complete once untouched this long (default WATCH_STABLE_MS, else ${DEFAULT_STABLE_MS})`,
      parsePositiveInt,
    )
    .option(
      "--concurrency <n>",
      `sheets taken at once (default WATCH_CONCURRENCY, else ${DEFAULT_WATCH_CONCURRENCY})`,
      parsePositiveInt,
    )
    .option(
      "--rescan-ms <n>",
      "how often the folder is scanned again, besides file events",
      parsePositiveInt,
      10_000,
    )
    .addOption(redisPrefixOption())
    .addHelpText(
      "after",
      "\nAccepted sheets move to archive/<batch>--<name>; refused ones to rejected/ with a report or a .error.txt note." +
        "\nIgnored: Excel lock files (~$...), .tmp/.part/.crdownload files and dotfiles.",
    )
    .action(async (flags: WatchFlags) => {
      const stopSignal = untilShutdownSignal({ graceMs: WATCH_STOP_GRACE_MS });
      const loaded = loadConfig();
      requireApi(loaded);
      const config = {
        ...loaded,
        watch: {
          ...loaded.watch,
          ...(flags.stableMs === undefined ? {} : { stableMs: flags.stableMs }),
          ...(flags.concurrency === undefined ? {} : { concurrency: flags.concurrency }),
        },
      };
      const logger = createLogger({ level: config.logLevel, name: "watch", secrets: configSecrets(config) });
      await requireRedis(config, {
        prefix: flags.redisPrefix,
        waitMs: REDIS_START_WAIT_MS,
        signal: abortOn(stopSignal),
        onWait: (problem) => logger.warn({ problem }, "Redis does not answer yet; waiting for it"),
      });
      const services = await assembleServices(config, {
        run: ["watch"],
        prefix: flags.redisPrefix,
        logger,
        shutdownGraceMs: WATCH_STOP_GRACE_MS,
        watchRescanMs: flags.rescanMs,
      });
      const service = services.watch!;
      logger.info({ folder: service.folder }, "watcher ready");
      const signal = await stopSignal;
      logger.info({ signal }, "stopping: finishing the sheet in hand");
      await services.stop();
      logger.info("watcher stopped");
      process.exitCode = 0;
    });
}
