/**
 * The one way an error reaches a log line (pino's `err`): pino's own serializer (type, message, stack
 * with every cause's message and stack appended, the error's own fields), then every string and
 * field of that, at any depth, cleaned of secrets an error can carry without anyone putting them
 * there on purpose:
 *
 * - a header or field named like a secret (`Authorization`, `api-key`, `password`, ...: the logger's
 *   secret field names, in any case) anywhere in the error's fields;
 * - the arguments of a Redis command an ioredis error names (`command.args`: an AUTH refusal carries
 *   the user and password in them, any other command the values it wrote);
 * - in text (messages, stacks, field values): the password of a URL (`redis://:pw@host`), a
 *   `Bearer` token, a secret header or field written as `name: value` or `name=value`;
 * - the known secret values the logger was given (the API key, the webhook secret), as they are or
 *   percent-encoded.
 */
import { stdSerializers } from "pino";
import { REDACTED, redactSecrets } from "./redact-secrets.js";

/** Deeper than this an error's fields are not written (they are never what a reader needs). */
const MAX_DEPTH = 8;

/** `scheme://user:password@` (the user kept) or `scheme://credential@` (all of it is the secret). */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@:]*)(?::([^\s/?#@]*))?@/gi;
const BEARER = /\bBearer\s+[A-Za-z0-9._~+/=-]+/g;

export function errorSerializer(
  secretKeys: ReadonlySet<string>,
  secrets: readonly (string | undefined | null)[],
): (err: unknown) => unknown {
  const names = [...secretKeys].map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
  // A secret header as text: `api-key: v`, `"authorization":"Bearer v"`, `password=v`.
  const namedValue = new RegExp(
    `\\b((?:${names})["']?\\s*[:=]\\s*["']?)(?:(?:Bearer|Basic)\\s+)?[^\\s"',;&})\\]]+`,
    "gi",
  );

  const cleanText = (text: string): string =>
    redactSecrets(
      text
        .replace(URL_USERINFO, (_all, scheme: string, user: string, password: string | undefined) =>
          password === undefined ? `${scheme}${REDACTED}@` : `${scheme}${user}:${REDACTED}@`,
        )
        .replace(namedValue, `$1${REDACTED}`)
        .replace(BEARER, `Bearer ${REDACTED}`),
      secrets,
    );

  const clean = (value: unknown, depth: number, seen: Set<object>): unknown => {
    if (typeof value === "string") return cleanText(value);
    if (value === null || typeof value !== "object") return value;
    if (value instanceof Date) return value;
    if (seen.has(value)) return "[Circular]";
    if (depth >= MAX_DEPTH) return "[…]";
    seen.add(value);
    try {
      if (Array.isArray(value)) return value.map((v) => clean(v, depth + 1, seen));
      if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
      const out: Record<string, unknown> = {};
      const isCommand = typeof (value as { name?: unknown }).name === "string";
      for (const [key, inner] of Object.entries(value)) {
        if (inner === undefined) continue;
        out[cleanText(key)] =
          secretKeys.has(key.toLowerCase()) || (isCommand && key === "args" && Array.isArray(inner))
            ? REDACTED
            : clean(inner, depth + 1, seen);
      }
      return out;
    } finally {
      seen.delete(value);
    }
  };

  return (err) => clean(stdSerializers.err(err as Error), 0, new Set());
}
