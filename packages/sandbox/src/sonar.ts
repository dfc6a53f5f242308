/**
 * Sandbox risk-session ("sonar") tokens: `sonar_<expiresEpochMs>_<hmac-hex>`, the HMAC-SHA256 of the
 * expiry keyed with a secret generated per sandbox run. Minted by `POST /v2/_sandbox/sonar-tokens`.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

const TOKEN = /^sonar_(\d{1,16})_([0-9a-f]{64})$/;

export function mintSonarToken(secret: Buffer, expiresAtMs: number): string {
  const mac = createHmac("sha256", secret).update(String(expiresAtMs)).digest("hex");
  return `sonar_${expiresAtMs}_${mac}`;
}

export type SonarCheck = { ok: true } | { ok: false; reason: "malformed" | "bad-signature" | "expired" };

export function verifySonarToken(secret: Buffer, token: string, nowMs: number): SonarCheck {
  const m = TOKEN.exec(token);
  if (!m?.[1] || !m[2]) return { ok: false, reason: "malformed" };
  const expected = createHmac("sha256", secret).update(m[1]).digest();
  const given = Buffer.from(m[2], "hex");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: "bad-signature" };
  }
  if (Number(m[1]) <= nowMs) return { ok: false, reason: "expired" };
  return { ok: true };
}
