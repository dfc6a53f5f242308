/**
 * `payouts token create <name> --role R` prints a bearer token once (only its hash is kept);
 * `payouts token list`, `payouts token revoke <name>`. For programs that call the HTTP API.
 */
import type { Command } from "commander";
import { AuditTrail } from "../../audit/index.js";
import { AuthStore, ROLES } from "../../auth/index.js";
import { loadConfig } from "../../config/index.js";
import { cliCaller } from "../../gate/index.js";
import { withRedis } from "../batch-store-connection.js";
import { redisPrefixOption } from "../options.js";
import { authFailure } from "./user.js";

interface TokenCommandOptions {
  redisPrefix: string;
}

export function registerToken(program: Command): void {
  const token = program.command("token").description("API tokens: create, list, revoke");

  token
    .command("create")
    .argument("<name>", "what the token is for (letters, digits, . _ @ -)")
    .requiredOption("--role <role>", `one of ${ROLES.join(", ")}`)
    .addOption(redisPrefixOption())
    .description("Create a bearer token; it is printed once and cannot be shown again")
    .action(async (name: string, opts: TokenCommandOptions & { role: string }) => {
      await withRedis(loadConfig(), opts.redisPrefix, async (redis) => {
        const caller = cliCaller();
        const created = await new AuthStore(redis, opts.redisPrefix)
          .createToken(name, opts.role, caller.actor.name)
          .catch(authFailure);
        await new AuditTrail(redis, opts.redisPrefix).record({
          ...caller,
          action: "token.create",
          target: name,
          outcome: "ok",
          detail: { role: created.info.role },
        });
        process.stderr.write(
          `token ${name} (role ${created.info.role}); store it now, it is not shown again:\n`,
        );
        process.stdout.write(`${created.token}\n`);
      });
    });

  token
    .command("list")
    .addOption(redisPrefixOption())
    .description("List token names and roles (never the tokens)")
    .action(async (opts: TokenCommandOptions) => {
      await withRedis(loadConfig(), opts.redisPrefix, async (redis) => {
        const tokens = await new AuthStore(redis, opts.redisPrefix).listTokens();
        if (tokens.length === 0) process.stdout.write("no tokens\n");
        for (const t of tokens) {
          process.stdout.write(
            `${t.name.padEnd(24)} ${t.role.padEnd(10)} created ${t.createdAt} by ${t.createdBy}\n`,
          );
        }
      });
    });

  token
    .command("revoke")
    .argument("<name>")
    .addOption(redisPrefixOption())
    .description("Revoke a token: requests that carry it are refused from now on")
    .action(async (name: string, opts: TokenCommandOptions) => {
      await withRedis(loadConfig(), opts.redisPrefix, async (redis) => {
        await new AuthStore(redis, opts.redisPrefix).revokeToken(name).catch(authFailure);
        await new AuditTrail(redis, opts.redisPrefix).record({
          ...cliCaller(),
          action: "token.revoke",
          target: name,
          outcome: "ok",
        });
        process.stdout.write(`token ${name} revoked\n`);
      });
    });
}
