/**
 * The root of every error this tool raises on purpose: a stable `code` a program can act on and a
 * `kind` that says whose the problem is. The kind is mapped once to an HTTP status (the API's error
 * handler) and once to an exit code (the CLI's last line); the classes below it only say what
 * happened.
 */

/** Whose problem an error is, which decides its HTTP status and exit code. */
export type ErrorKind =
  /** The input (a sheet, a row, a request's content) has problems the sender can fix. */
  | "invalid-input"
  /** The command or request was used wrongly (a flag, a setting, a field). */
  | "usage"
  | "unauthenticated"
  | "forbidden"
  | "not-found"
  /** The request conflicts with the state things are in (already decided, already submitted). */
  | "conflict"
  /** Something we depend on (Redis, the disk, the Payouts Service) failed or is away. */
  | "unavailable"
  /** Our own fault: a bug, or a state that should not exist. */
  | "internal";

export class PayoutsError extends Error {
  override name = "PayoutsError";
  readonly code: string;
  readonly kind: ErrorKind;
  constructor(code: string, message: string, options: { kind?: ErrorKind; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.kind = options.kind ?? "internal";
  }
}

const HTTP_STATUS: Readonly<Record<ErrorKind, number>> = {
  "invalid-input": 422,
  usage: 400,
  unauthenticated: 401,
  forbidden: 403,
  "not-found": 404,
  conflict: 409,
  unavailable: 503,
  internal: 500,
};

/** 0 success, 1 the input had problems (or the request was refused), 2 usage or environment error. */
const EXIT_CODE: Readonly<Record<ErrorKind, 1 | 2>> = {
  "invalid-input": 1,
  usage: 2,
  unauthenticated: 2,
  forbidden: 1,
  "not-found": 2,
  conflict: 1,
  unavailable: 2,
  internal: 2,
};

/** The HTTP status of an error of this kind. */
export function httpStatusOf(kind: ErrorKind): number {
  return HTTP_STATUS[kind];
}

/** The exit code of a command that ends with an error of this kind. */
export function exitCodeOf(kind: ErrorKind): 1 | 2 {
  return EXIT_CODE[kind];
}
