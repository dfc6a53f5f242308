/**
 * A create run under its Idempotency-Key (the HTTP side of idempotency.ts). Same key + same request
 * replays the stored response; a different request under the key is 422 IDEMPOTENCY_KEY_REUSED; a
 * key still in flight is 409. The response is stored just before it is sent (after the latency
 * fault), and never when it is a server error, so a retry with the same key can still succeed.
 */

import { ApiError, badRequest, validationError } from "./errors.js";
import { errorReply, header, parseJson, type Reply, type RequestContext } from "./http.js";
import { requestFingerprint } from "./idempotency.js";
import { StoredPayment } from "./payment-record.js";
import type { SandboxState } from "./state.js";
import { HEADERS, IDEMPOTENCY_KEY_MAX } from "./wire.js";

export interface IdempotentRoute {
  /** Names the operation in the fingerprint, e.g. "POST /payments". */
  route: string;
  /** The resolved entity (part of the fingerprint), or "-" when there is none. */
  entityId: string;
  /** Whether a missing key is 400 IDEMPOTENCY_KEY_REQUIRED (POST /payments) or simply not idempotent. */
  required: boolean;
}

function requestKey(ctx: RequestContext, required: boolean): string | undefined {
  const key = header(ctx.headers, HEADERS.idempotencyKey);
  if (key === undefined || key === "") {
    if (required) throw badRequest("IDEMPOTENCY_KEY_REQUIRED", "Idempotency-Key header is required");
    return undefined;
  }
  if (key.length > IDEMPOTENCY_KEY_MAX) {
    throw validationError(`Idempotency-Key must be at most ${IDEMPOTENCY_KEY_MAX} characters`, [
      { path: "Idempotency-Key", message: "too long" },
    ]);
  }
  return key;
}

/** The body as the fingerprint sees it: malformed JSON still fingerprints (by its bytes). */
function fingerprintBody(raw: Buffer): unknown {
  try {
    return parseJson(raw);
  } catch {
    return { unparsable: raw.toString("base64") };
  }
}

/** The body a replay sends: a stored payment as its create answered it, anything else as kept. */
function replayBody(kept: unknown): unknown {
  return kept instanceof StoredPayment ? kept.createdView() : kept;
}

export function idempotent(
  state: SandboxState,
  ctx: RequestContext,
  at: IdempotentRoute,
  run: () => Reply,
): Reply {
  const key = requestKey(ctx, at.required);
  if (key === undefined) return run();
  const fingerprint = requestFingerprint({
    route: at.route,
    entityId: at.entityId,
    body: fingerprintBody(ctx.raw),
  });
  const claim = state.idempotency.claim(ctx.apiKey, key, fingerprint);
  switch (claim.kind) {
    case "mismatch":
      throw new ApiError(
        422,
        "invalid_request_error",
        "IDEMPOTENCY_KEY_REUSED",
        "this Idempotency-Key was used with a different request; use a new key for a new request",
      );
    case "in-progress":
      throw new ApiError(
        409,
        "conflict_error",
        "IDEMPOTENCY_KEY_IN_PROGRESS",
        "a request with this Idempotency-Key is still in progress; retry later",
      );
    case "replay":
      return {
        status: claim.response.status,
        body: replayBody(claim.response.body),
        headers: { "idempotent-replayed": "true" },
      };
    case "claimed":
      break;
  }
  let reply: Reply;
  try {
    reply = run();
  } catch (err) {
    if (!(err instanceof ApiError)) {
      state.idempotency.release(ctx.apiKey, key);
      throw err;
    }
    reply = errorReply(err);
  }
  return {
    ...reply,
    beforeSend: (final) => {
      if (final.status >= 500) state.idempotency.release(ctx.apiKey, key);
      else state.idempotency.complete(ctx.apiKey, key, final.status, final.remember ?? final.body);
    },
  };
}
