import type { Requester } from "../request.js";

/** What every resource module receives: the one request function and the client's defaults. */
export interface ResourceContext {
  requester: Requester;
  entityId: string;
  newIdempotencyKey: () => string;
}

/** Options of a write call. */
export interface WriteOptions {
  /** Idempotency-Key header; on creates other than payments a UUID is generated when absent. */
  idempotencyKey?: string;
  /** `Service-Sonar-Token`: the end user's device session token, when one exists. */
  sonarToken?: string;
  signal?: AbortSignal;
}

/** Options of a read call. */
export interface ReadOptions {
  signal?: AbortSignal;
}

/** Ids go into paths percent-encoded: they are opaque and must never be able to change the path. */
export function pathId(id: string): string {
  if (id.length === 0) throw new TypeError("id must not be empty");
  return encodeURIComponent(id);
}
