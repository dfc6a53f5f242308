/**
 * `payouts <command>`: the command line. Each command lives in its own module under commands/ and
 * registers itself on the program; this file only wires them and turns errors into exit codes.
 */
import { Command, CommanderError } from "commander";
import { packageVersion } from "../assets/index.js";
import { ConfigError, loadConfig } from "../config/index.js";
import { exitCodeOf, PayoutsError } from "../errors/index.js";
import { hashTaggedPrefix } from "../redis/index.js";
import { configureSheetLimits } from "../sheets/index.js";
import { registerApprove } from "./commands/approve.js";
import { registerAudit } from "./commands/audit.js";
import { registerAuditTrail } from "./commands/audit-trail.js";
import { registerDemo } from "./commands/demo.js";
import { registerMigrate } from "./commands/migrate.js";
import { registerReject } from "./commands/reject.js";
import { registerResult } from "./commands/result.js";
import { registerRetry } from "./commands/retry.js";
import { registerSandbox } from "./commands/sandbox.js";
import { registerServe } from "./commands/serve.js";
import { registerStop } from "./commands/stop.js";
import { registerSubmit } from "./commands/submit.js";
import { registerTemplate } from "./commands/template.js";
import { registerToken } from "./commands/token.js";
import { registerUser } from "./commands/user.js";
import { registerValidate } from "./commands/validate.js";
import { registerWatch } from "./commands/watch.js";
import { registerWebhook } from "./commands/webhook.js";
import { registerPipelineCommands } from "./commands/worker.js";
import { CliError, EXIT, environmentFailure } from "./exit-codes.js";
import { releaseShutdownSignals, stopWhenOutputCloses, wasOutputClosed } from "./signals.js";

export function buildProgram(): Command {
  const program = new Command("payouts")
    .description("Batch payouts from spreadsheets, on the Partner Payouts Service")
    .version(packageVersion())
    .showHelpAfterError()
    .exitOverride();
  // Every command that reads a sheet reads it within the configured limits.
  program.hook("preAction", applySheetLimits);
  // On a Redis Cluster every key of the installation must share one slot: hash-tag the prefix.
  program.hook("preAction", applyClusterPrefix);
  registerDemo(program);
  registerSandbox(program);
  registerTemplate(program);
  registerValidate(program);
  registerSubmit(program);
  registerPipelineCommands(program);
  registerServe(program);
  registerWebhook(program);
  registerResult(program);
  registerAudit(program);
  registerAuditTrail(program);
  registerWatch(program);
  registerRetry(program);
  registerStop(program);
  registerUser(program);
  registerToken(program);
  registerApprove(program);
  registerReject(program);
  registerMigrate(program);
  return program;
}

function applySheetLimits(): void {
  try {
    configureSheetLimits(loadConfig().sheetLimits);
  } catch (err) {
    // A bad environment is reported by the command that needs it, with the variable named.
    if (!(err instanceof ConfigError)) throw err;
  }
}

/**
 * With REDIS_CLUSTER_NODES set, `--redis-prefix payouts` becomes `{payouts}` for every command (a
 * prefix with a hash tag already is kept), so every key, script and queue of it lives in one slot. A
 * single Redis keeps the plain prefix, so data written before keeps being found.
 */
function applyClusterPrefix(_program: Command, command: Command): void {
  const prefix: unknown = command.getOptionValue("redisPrefix");
  if (typeof prefix !== "string") return;
  try {
    if (loadConfig().redisClusterNodes === undefined) return;
  } catch {
    return; // a bad setting is reported by the command's own loadConfig, with the variable named
  }
  command.setOptionValueWithSource(
    "redisPrefix",
    hashTaggedPrefix(prefix),
    command.getOptionValueSource("redisPrefix") ?? "default",
  );
}

export async function main(argv: string[]): Promise<number> {
  stopWhenOutputCloses();
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    if (wasOutputClosed()) return EXIT.usage;
    return typeof process.exitCode === "number" ? process.exitCode : EXIT.ok;
  } catch (err) {
    releaseShutdownSignals();
    return reportFailure(err);
  }
}

/**
 * Every failure that reaches the top ends here, as one line on stderr and an exit code: usage errors
 * (printed by commander already), CliError and ConfigError with their own message, the environment's
 * failures (Redis, the disk, the service) described in one line. Only a bug prints a stack trace.
 */
export function reportFailure(err: unknown): number {
  if (err instanceof CommanderError) {
    // --help and --version end through here with exit code 0; real usage errors were printed already.
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (err instanceof CliError) {
    process.stderr.write(`payouts: ${err.message}\n`);
    return err.exitCode;
  }
  const environment = environmentFailure(err);
  if (environment) {
    process.stderr.write(`payouts: ${environment}\n`);
    return EXIT.usage;
  }
  // Any other deliberate error says what to do in its message; its kind decides the exit code.
  if (err instanceof PayoutsError && err.kind !== "internal") {
    process.stderr.write(`payouts: ${err.message}\n`);
    return exitCodeOf(err.kind);
  }
  process.stderr.write(
    `payouts: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  return EXIT.usage;
}
