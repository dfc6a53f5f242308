/** Exit codes of every command (README "Commands"), and the one line an environment failure gets. */

import { PayoutsError } from "../errors/index.js";
import { PayoutsApiConnectionError, PayoutsApiError } from "../payouts-api/index.js";
import { isRedisUnavailable, SubmissionNotKeptError } from "../pipeline/index.js";

export const EXIT = {
  /** Success. */
  ok: 0,
  /** The input had problems (for example invalid rows). */
  inputProblems: 1,
  /** Usage or environment error (bad flags, missing settings, unreadable file, unreachable service). */
  usage: 2,
} as const;

/**
 * An error that ends a command with a message and an exit code of the command's own choice, without a
 * stack trace; any other PayoutsError ends it with the exit code of its kind.
 */
export class CliError extends PayoutsError {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly exitCode: number = EXIT.usage,
  ) {
    super("COMMAND_FAILED", message, { kind: exitCode === EXIT.inputProblems ? "invalid-input" : "usage" });
  }
}

/** What was not kept when a command stopped part-way, and how to go on; ends every mid-way failure. */
const NOT_KEPT = "what this command did after that was not kept: run it again once";

/** File-system errors that say the disk or the folder cannot take what we write, with what to do. */
const FILE_FAILURES: Readonly<Record<string, string>> = {
  ENOSPC: "no space left on the device",
  EDQUOT: "the disk quota is used up",
  EROFS: "the file system is read-only",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EIO: "an input/output error of the device",
  EMFILE: "too many open files in this process",
  ENFILE: "too many open files on this system",
};

/**
 * One line for a failure of what a command depends on (Redis, the disk, the Payouts Service) that
 * reached the top without a CliError: such a failure is the environment's, not a bug, and gets no
 * stack trace. Looks through `cause` chains (a wrapped Redis or file error). Undefined for anything
 * else (a bug: the caller prints its stack).
 */
export function environmentFailure(err: unknown): string | undefined {
  for (let current = err, depth = 0; current instanceof Error && depth < 5; depth++) {
    const line = describeOne(current);
    if (line !== undefined) return line;
    current = current.cause;
  }
  return undefined;
}

function describeOne(err: Error): string | undefined {
  if (err instanceof SubmissionNotKeptError) return err.message;
  if (isRedisOutOfMemory(err)) {
    return (
      "Redis at REDIS_URL is out of memory (its maxmemory is reached) and refused a write; " +
      `${NOT_KEPT} Redis has room (raise maxmemory or free memory; keep maxmemory-policy noeviction)`
    );
  }
  if (isRedisUnavailable(err)) {
    return `Redis at REDIS_URL is unreachable or went away mid-way (${err.message}); ${NOT_KEPT} Redis answers`;
  }
  if (err.name === "ReplyError") return `Redis at REDIS_URL refused a command: ${err.message}`;
  if (err instanceof PayoutsApiConnectionError)
    return `cannot reach the Partner Payouts Service at PAYOUTS_API_URL: ${err.message}`;
  if (err instanceof PayoutsApiError) return `the Partner Payouts Service refused a request: ${err.message}`;
  return fileFailure(err);
}

/** Redis's answer to a write once `maxmemory` is reached under `noeviction`. */
export function isRedisOutOfMemory(err: unknown): boolean {
  return err instanceof Error && /^OOM command not allowed/.test(err.message);
}

function fileFailure(err: Error): string | undefined {
  const { code, path, syscall } = err as NodeJS.ErrnoException;
  const what = code === undefined ? undefined : FILE_FAILURES[code];
  if (what === undefined || syscall === undefined) return undefined;
  const where = path === undefined ? "a file" : path;
  const fix =
    code === "ENOSPC" || code === "EDQUOT"
      ? "free some space (DATA_DIR and the folders it writes)"
      : "fix the folder's permissions or mount (DATA_DIR and the folders it writes)";
  return `cannot ${syscall} ${where}: ${what} (${code}); ${NOT_KEPT} you ${fix}`;
}
