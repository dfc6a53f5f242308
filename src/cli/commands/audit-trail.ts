/**
 * `payouts audit-trail [--batch B] [--actor A] [--action X] [--limit N] [--csv] [-o PATH]`: who did what
 * (docs/design.md §3.14), newest first, from Redis, with the API's filters. Not `payouts audit`, which
 * holds a batch against the service's ledger.
 */

import { once } from "node:events";
import type { Writable } from "node:stream";
import type { Command } from "commander";
import { AUDIT_CSV_HEADER, type AuditEntry, AuditTrail, auditCsvLine } from "../../audit/index.js";
import { loadConfig } from "../../config/index.js";
import { writeFileAtomic } from "../../files/index.js";
import { withRedis } from "../batch-store-connection.js";
import { CliError, EXIT } from "../exit-codes.js";
import { redisPrefixOption } from "../options.js";

interface AuditTrailFlags {
  batch?: string;
  actor?: string;
  action?: string;
  limit: string;
  csv?: boolean;
  output?: string;
  redisPrefix: string;
}

function line(e: AuditEntry): string {
  const detail = e.detail ? ` ${JSON.stringify(e.detail)}` : "";
  return `${e.at}  ${e.actor?.name ?? "-"}  ${e.action}  ${e.target ?? "-"}  ${e.from}  ${e.outcome}${detail}`;
}

export function registerAuditTrail(program: Command): void {
  program
    .command("audit-trail")
    .description("Who did what: the audit trail, newest first (filtered by batch, actor, action; CSV)")
    .option("--batch <id>", "entries about this batch or one of its rows")
    .option("--actor <name>", "the actor's name exactly (alice, cli:ops, system:inbox, system:schedule)")
    .option("--action <action>", "an action (rows.correct) or its first part (rows)")
    .option("--limit <n>", "entries to print (plain lines; CSV has every match)", "50")
    .option("--csv", "write every matching entry as CSV")
    .option("-o, --output <path>", "with --csv: the file to write (default standard output)")
    .addOption(redisPrefixOption())
    .action(async (flags: AuditTrailFlags) => {
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
        throw new CliError("--limit: a whole number from 1 to 10000", EXIT.usage);
      }
      const filter = { batch: flags.batch, actor: flags.actor, action: flags.action };
      await withRedis(loadConfig(), flags.redisPrefix, async (redis) => {
        const trail = new AuditTrail(redis, flags.redisPrefix);
        if (!flags.csv) {
          const { data } = await trail.list({ limit, filter });
          for (const e of data) process.stdout.write(`${line(e)}\n`);
          if (data.length === 0) process.stderr.write("no audit entries match\n");
          return;
        }
        // Streamed, a line per entry as it is read; a file is written whole or not at all (§3.7).
        const csv = async (out: Writable) => {
          const write = async (text: string) => {
            if (!out.write(text)) await once(out, "drain");
          };
          await write(AUDIT_CSV_HEADER);
          for await (const e of trail.entries(filter)) await write(auditCsvLine(e));
        };
        if (!flags.output) return csv(process.stdout);
        await writeFileAtomic(flags.output, csv);
        process.stderr.write(`${flags.output}\n`);
      });
    });
}
