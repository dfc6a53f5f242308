import { type DestinationStream, type Logger, type LoggerOptions, pino } from "pino";
import { errorSerializer } from "./error-serializer.js";
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
  /**
   * Secret values this process knows (the API key, the webhook secret, the API token): never written
   * inside a logged error, wherever they appear in it.
   */
  secrets?: readonly (string | undefined | null)[];
}

/**
 * Field names whose values are secrets (API key, webhook secret, signatures, session tokens) or full
 * bank/card/tax identifiers. Matched at the top level and up to three objects deep, since pino's
 * redaction has no "any depth" wildcard.
 */
const SECRET_FIELDS = [
  "apiKey",
  '["api-key"]',
  '["x-api-key"]',
  "authorization",
  "Authorization",
  '["proxy-authorization"]',
  "cookie",
  '["set-cookie"]',
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

/**
 * {@link SECRET_FIELDS} as key names, lower case: what a logged error's fields are censored by at any
 * depth (header names come in any case). Paths into an object (`card.number`) stay paths only.
 */
const SECRET_KEYS: ReadonlySet<string> = new Set(
  SECRET_FIELDS.filter((f) => !/^\w+\.\w/.test(f)).map((f) =>
    (f.startsWith("[") ? (JSON.parse(f.slice(1, -1)) as string) : f).toLowerCase(),
  ),
);

/**
 * A pino logger that censors secret-bearing fields, and every error it writes (errorSerializer).
 * Use it for every log line the app writes.
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const config: LoggerOptions = {
    level: options.level ?? "info",
    redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    serializers: { err: errorSerializer(SECRET_KEYS, options.secrets ?? []) },
  };
  if (options.name !== undefined) config.name = options.name;
  return options.destination ? pino(config, options.destination) : pino(config);
}

/**
 * The secret values among the settings, for {@link CreateLoggerOptions.secrets}: the API key, the
 * webhook secret, the API token, REDIS_URL's password. Every entry point passes them to its logger.
 */
export function configSecrets(config: {
  apiKey?: string | undefined;
  webhookSecret?: string | undefined;
  token?: string | undefined;
  redisUrl?: string | undefined;
}): string[] {
  const values = [config.apiKey, config.webhookSecret, config.token, redisPassword(config.redisUrl)];
  return values.filter((v): v is string => v !== undefined && v !== "");
}

function redisPassword(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return undefined;
  }
}
