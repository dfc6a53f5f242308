import { type DestinationStream, type Logger, type LoggerOptions, pino } from "pino";
import { REDACTED } from "./redact-secrets.js";

export type { Logger } from "pino";

/**
 * What a module needs of a logger, the one logger type every module takes: pino's Logger is one, and a
 * test passes a small recorder. `debug` may be absent (a recorder that keeps only what matters).
 */
export interface LogSink {
  debug?(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export interface CreateLoggerOptions {
  /** Minimum level written. Default `info`. */
  level?: LogLevel;
  /** Component name, written as `name` on every line. */
  name?: string;
  /** Where lines go. Default: stdout (pino's own fast destination). Tests pass a stream to read back. */
  destination?: DestinationStream;
}

/**
 * Field names whose values are secrets (API key, webhook secret, signatures, session tokens) or full
 * bank/card/tax identifiers. Matched at the top level and up to three objects deep, since pino's
 * redaction has no "any depth" wildcard.
 */
const SECRET_FIELDS = [
  "apiKey",
  '["api-key"]',
  "authorization",
  "Authorization",
  "secret",
  "webhookSecret",
  "signingSecret",
  "signature",
  '["x-service-signature"]',
  "sonarToken",
  '["service-sonar-token"]',
  "password",
  "accountNumber",
  "iban",
  "cardNumber",
  "card.number",
  "taxInfo.identifier",
  "internationalId",
] as const;

const MAX_WILDCARD_DEPTH = 3;

/** The pino `redact.paths` for {@link SECRET_FIELDS}. Exported so tests can check coverage. */
export const REDACT_PATHS: readonly string[] = SECRET_FIELDS.flatMap((field) => {
  const paths: string[] = [];
  for (let depth = 0; depth <= MAX_WILDCARD_DEPTH; depth++) {
    const prefix = "*.".repeat(depth);
    // Bracket paths (names with dashes) attach to a wildcard without a dot: `*["api-key"]`.
    paths.push(field.startsWith("[") ? `${prefix.slice(0, -1) || ""}${field}` : `${prefix}${field}`);
  }
  return paths;
});

/** A pino logger that censors secret-bearing fields. Use it for every log line the app writes. */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const config: LoggerOptions = {
    level: options.level ?? "info",
    redact: { paths: [...REDACT_PATHS], censor: REDACTED },
  };
  if (options.name !== undefined) config.name = options.name;
  return options.destination ? pino(config, options.destination) : pino(config);
}
