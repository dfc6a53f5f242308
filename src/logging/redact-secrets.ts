/**
 * Replacement of known secret values inside free text. Field-name redaction (in the logger) cannot
 * catch a secret that a server echoes inside an error message, or one that ends up in a URL; this
 * can, because it looks for the values themselves.
 */

export const REDACTED = "[REDACTED]";

/**
 * Secrets shorter than this are not searched for: replacing every "a" or "12" in a message would
 * destroy it while protecting nothing (real keys and secrets are long).
 */
const MIN_SECRET_LENGTH = 4;

function searchableForms(secrets: readonly (string | undefined | null)[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (!secret || secret.length < MIN_SECRET_LENGTH) continue;
    forms.add(secret);
    // A secret that travelled in a URL or a form body shows up percent-encoded.
    forms.add(encodeURIComponent(secret));
  }
  // Longest first, so a secret that contains another is replaced whole.
  return [...forms].sort((a, b) => b.length - a.length);
}

/** Replaces every occurrence of each known secret value in `text` with `[REDACTED]`. */
export function redactSecrets(text: string, secrets: readonly (string | undefined | null)[]): string {
  let out = text;
  for (const form of searchableForms(secrets)) {
    out = out.split(form).join(REDACTED);
  }
  return out;
}

/**
 * Same as {@link redactSecrets} for every string inside a JSON-like value (objects, arrays), e.g. the
 * `details` of an API error. Returns a copy; the input is not modified.
 */
export function redactSecretsDeep<T>(value: T, secrets: readonly (string | undefined | null)[]): T {
  if (searchableForms(secrets).length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return redactSecrets(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, inner] of Object.entries(v)) out[redactSecrets(k, secrets)] = walk(inner);
      return out;
    }
    return v;
  };
  return walk(value) as T;
}
