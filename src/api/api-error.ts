/**
 * The one error shape of the HTTP API: `{ "error": { "code", "message" } }`. Routes throw an ApiError;
 * the server's error handler turns it (and Fastify's own errors) into that body.
 */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    /** Extra fields beside code and message (e.g. the earlier batch of a DUPLICATE_FILE). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export function errorBody(code: string, message: string, details?: Record<string, unknown>) {
  return { error: { code, message, ...details } };
}
