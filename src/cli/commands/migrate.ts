/**
 * `payouts migrate`: moves the Redis data under a prefix to the layout this version reads
 * (src/redis/layout-version.ts), with every other payouts process stopped. Safe to run again: a store
 * already in this layout is left as it is.
 */
import type { Command } from "commander";
import { loadConfig } from "../../config/index.js";
import { LAYOUT_VERSION, LayoutVersionError, migrateLayout } from "../../redis/index.js";
import { withRedisOfAnyLayout } from "../batch-store-connection.js";
import { CliError, EXIT } from "../exit-codes.js";
import { redisPrefixOption } from "../options.js";

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description(
      `Move the Redis data to the layout this version reads (layout ${LAYOUT_VERSION}); stop every other payouts process first`,
    )
    .addOption(redisPrefixOption())
    .addHelpText(
      "after",
      "\nExit codes: 0 the data is in this version's layout, 2 it cannot be moved (the line says why).",
    )
    .action(async (opts: { redisPrefix: string }) => {
      await withRedisOfAnyLayout(loadConfig(), async (redis) => {
        const say = (line: string) => process.stdout.write(`${line}\n`);
        const done = await migrateLayout(redis, opts.redisPrefix, say).catch((err: unknown) => {
          throw err instanceof LayoutVersionError ? new CliError(err.message, EXIT.usage) : err;
        });
        say(
          done.steps === 0
            ? `already in layout ${done.to} under the prefix "${opts.redisPrefix}": nothing to do`
            : `moved from layout ${done.from} to ${done.to} under the prefix "${opts.redisPrefix}"`,
        );
      });
    });
}
