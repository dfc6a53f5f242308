/** Exit codes of every command (README "Commands"). */
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
