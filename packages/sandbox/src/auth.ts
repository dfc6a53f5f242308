/**
 * Who is calling and on behalf of which entity: the API key (401s), the `Service-Entity-Id` header
 * or an entity path segment (`me` or `ent_…`), and the optional sonar session token on payments.
 */
import type { IncomingMessage } from "node:http";
import { entityOf } from "./entities.js";
import { forbidden, unauthorized, validationError } from "./errors.js";
import { header } from "./http.js";
import { verifySonarToken } from "./sonar.js";
import type { SandboxState } from "./state.js";
import { HEADERS } from "./wire.js";

type Headers = IncomingMessage["headers"];

/** The partner's API key from the request, or a 401. `segments` is the path after `/v2`. */
export function authenticate(state: SandboxState, headers: Headers, segments: readonly string[]): string {
  let key = header(headers, HEADERS.apiKey);
  // The spec's webhook example shows a bearer header; the sandbox accepts both on /webhook*.
  if (key === undefined && segments[0] === "webhook") {
    const auth = header(headers, "authorization");
    const m = auth ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
    key = m?.[1];
  }
  if (!key) throw unauthorized("UNAUTHORIZED", "missing api-key header");
  if (state.partner.revokedApiKeys.includes(key)) {
    throw unauthorized(
      "NO_ACTIVE_API_KEY",
      "no active API key exists for this account (the key was revoked)",
    );
  }
  if (key !== state.partner.apiKey) throw unauthorized("UNAUTHORIZED", "API key not recognized");
  return key;
}

/** `me` resolves when the partner has exactly one entity; unknown ids are 404. */
export function resolveEntity(state: SandboxState, value: string): string {
  if (value === "me") {
    const ids = [...state.entities.keys()];
    if (ids.length !== 1 || !ids[0]) {
      throw validationError(`"me" needs exactly one entity; this partner has ${ids.length}`, [
        { path: "Service-Entity-Id", message: "ambiguous" },
      ]);
    }
    return ids[0];
  }
  if (!/^ent_[A-Za-z0-9_-]+$/.test(value)) {
    throw validationError("entity id must be ent_<id> or me", [
      { path: "Service-Entity-Id", message: "malformed" },
    ]);
  }
  entityOf(state, value);
  return value;
}

export function entityFromHeader(state: SandboxState, headers: Headers): string {
  const value = header(headers, HEADERS.entity);
  if (!value) {
    throw validationError("Service-Entity-Id header is required on this endpoint", [
      { path: "Service-Entity-Id", message: "required" },
    ]);
  }
  return resolveEntity(state, value);
}

/** A `Service-Sonar-Token`, when sent, must be valid and unexpired (403 otherwise). */
export function checkSonar(state: SandboxState, headers: Headers): void {
  const token = header(headers, HEADERS.sonarToken);
  if (token === undefined) return;
  const result = verifySonarToken(state.sonarSecret, token, state.now());
  if (!result.ok) {
    throw forbidden(
      "FORBIDDEN",
      result.reason === "expired" ? "Service-Sonar-Token has expired" : "Service-Sonar-Token is not valid",
    );
  }
}
