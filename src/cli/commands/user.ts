/**
 * `payouts user add <name> --role R` (password from standard input), `payouts user list`,
 * `payouts user disable <name>`: the people who log in to the console. Every change goes to the
 * audit trail as done by the shell user on this machine.
 */
import { createInterface } from "node:readline";
import { Writable } from "node:stream";
import type { Command } from "commander";
import { AuditTrail } from "../../audit/index.js";
import { AuthError, AuthStore, ROLES } from "../../auth/index.js";
import { loadConfig } from "../../config/index.js";
import { cliCaller } from "../../gate/index.js";
import { withRedis } from "../batch-store-connection.js";
import { CliError, EXIT } from "../exit-codes.js";
import { redisPrefixOption } from "../options.js";

interface AuthCommandOptions {
  redisPrefix: string;
}

/** The first line of standard input; on a terminal, asked for without echoing it. */
export async function readSecretLine(prompt: string): Promise<string> {
  const input = process.stdin;
  const muted = new Writable({ write: (_chunk, _enc, done) => done() });
  if (input.isTTY) process.stderr.write(prompt);
  const rl = createInterface({ input, output: input.isTTY ? muted : undefined, terminal: input.isTTY });
  try {
    for await (const line of rl) return line;
    return "";
  } finally {
    rl.close();
    if (input.isTTY) process.stderr.write("\n");
  }
}

export function authFailure(err: unknown): never {
  if (err instanceof AuthError) {
    throw new CliError(err.message, err.code === "NOT_FOUND" ? EXIT.inputProblems : EXIT.usage);
  }
  throw err;
}

export function registerUser(program: Command): void {
  const user = program.command("user").description("Console users: add, list, disable");

  user
    .command("add")
    .argument("<name>", "login name (letters, digits, . _ @ -)")
    .requiredOption("--role <role>", `one of ${ROLES.join(", ")}`)
    .addOption(redisPrefixOption())
    .description("Add a user; the password is read from standard input (at least 10 characters)")
    .action(async (name: string, opts: AuthCommandOptions & { role: string }) => {
      const password = await readSecretLine(`password for ${name}: `);
      await withRedis(loadConfig(), opts.redisPrefix, async (redis) => {
        const store = new AuthStore(redis, opts.redisPrefix);
        const added = await store.addUser(name, opts.role, password).catch(authFailure);
        await new AuditTrail(redis, opts.redisPrefix).record({
          ...cliCaller(),
          action: "user.add",
          target: name,
          outcome: "ok",
          detail: { role: added.role },
        });
        process.stdout.write(`user ${added.name} added with role ${added.role}\n`);
      });
    });

  user
    .command("list")
    .addOption(redisPrefixOption())
    .option("--json", "print JSON")
    .description("List users and their roles")
    .action(async (opts: AuthCommandOptions & { json?: boolean }) => {
      await withRedis(loadConfig(), opts.redisPrefix, async (redis) => {
        const users = await new AuthStore(redis, opts.redisPrefix).listUsers();
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(users, null, 2)}\n`);
          return;
        }
        if (users.length === 0)
          process.stdout.write("no users (add one with `payouts user add <name> --role admin`)\n");
        for (const u of users) {
          process.stdout.write(
            `${u.name.padEnd(24)} ${u.role.padEnd(10)} ${u.disabled ? "disabled" : "active  "} since ${u.createdAt}\n`,
          );
        }
      });
    });

  user
    .command("disable")
    .argument("<name>")
    .addOption(redisPrefixOption())
    .description("Disable a user: their sessions end and they can no longer log in")
    .action(async (name: string, opts: AuthCommandOptions) => {
      await withRedis(loadConfig(), opts.redisPrefix, async (redis) => {
        await new AuthStore(redis, opts.redisPrefix).disableUser(name).catch(authFailure);
        await new AuditTrail(redis, opts.redisPrefix).record({
          ...cliCaller(),
          action: "user.disable",
          target: name,
          outcome: "ok",
        });
        process.stdout.write(`user ${name} disabled\n`);
      });
    });
}
