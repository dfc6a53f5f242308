/**
 * The one error shape of the HTTP API: `{ "error": { "code", "message" } }`. Routes throw an ApiError
 * when the status is the route's own choice; any other PayoutsError gets the status of its kind. The
 * server's error handler turns both (and Fastify's own errors) into that body.
 */
import { PayoutsError } from "../errors/index.js";
export class ApiError extends PayoutsError {
  override readonly name = "ApiError";
  constructor(
    readonly statusCode: number,
    code: string,
    message: string,
    /** Extra fields beside code and message (e.g. the earlier batch of a DUPLICATE_FILE). */
    readonly details?: Record<string, unknown>,
  ) {
    super(code, message, { kind: statusCode >= 500 ? "internal" : "usage" });
  }
}

export function errorBody(code: string, message: string, details?: Record<string, unknown>) {
  return { error: { code, message, ...details } };
}
