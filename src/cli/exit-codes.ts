/** Exit codes of every command (README "Commands"). */
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

/** An error that ends a command with a message and an exit code, without a stack trace. */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly exitCode: number = EXIT.usage,
  ) {
    super(message);
  }
}

/**
 * One line for a failure of what a command depends on (Redis, the Payouts Service) that reached the
 * top without a CliError: such a failure is the environment's, not a bug, and gets no stack trace
 * (issue 13, point 7). Undefined for anything else.
 */
export function environmentFailure(err: unknown): string | undefined {
  if (err instanceof SubmissionNotKeptError) return err.message;
  if (isRedisUnavailable(err)) {
    return (
      `Redis at REDIS_URL is unreachable or went away mid-way (${(err as Error).message}); ` +
      "what this command did after that was not kept: run it again once Redis answers"
    );
  }
  if (err instanceof PayoutsApiConnectionError)
    return `cannot reach the Partner Payouts Service at PAYOUTS_API_URL: ${err.message}`;
  if (err instanceof PayoutsApiError) return `the Partner Payouts Service refused a request: ${err.message}`;
  return undefined;
}
