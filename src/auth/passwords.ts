/**
 * Password hashes: scrypt (node:crypto) with a random salt, stored as
 * `scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>` so the cost can be raised later without breaking old
 * hashes. Comparison is constant-time.
 */
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

const KEY_LENGTH = 64;
const DEFAULT_COST = { N: 16_384, r: 8, p: 1 };
/** Passwords are at least this long: the console is reachable over a network. */
export const MIN_PASSWORD_LENGTH = 10;
/** scrypt's input is bounded so a huge "password" cannot tie up the server. */
export const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, cost: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFKC"), salt, KEY_LENGTH, { ...cost, maxmem: 64 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, DEFAULT_COST);
  const { N, r, p } = DEFAULT_COST;
  return `scrypt$${N}$${r}$${p}$${salt.toString("base64")}$${key.toString("base64")}`;
}

/** True when `password` matches `stored`; false for a malformed hash (never throws on input). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0)) return false;
  const expected = Buffer.from(parts[5] ?? "", "base64");
  if (expected.length !== KEY_LENGTH) return false;
  const key = await derive(password, Buffer.from(parts[4] ?? "", "base64"), { N, r, p });
  return timingSafeEqual(key, expected);
}

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH)
    return `a password needs at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH)
    return `a password has at most ${MAX_PASSWORD_LENGTH} characters`;
  return undefined;
}
