/**
 * The sandbox's one error class and the helpers that build it. Every error the server answers goes
 * through `ApiError`, so the envelope `{ error: { type, code, message, details? } }` has one shape.
 */
import type { z } from "zod";
import type { ErrorType } from "./wire.js";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ApiError";
  }

  toEnvelope(): {
    error: { type: string; code: string; message: string; details?: Record<string, unknown> };
  } {
    return {
      error: {
        type: this.type,
        code: this.code,
        message: this.message,
        ...(this.details ? { details: this.details } : {}),
      },
    };
  }
}

export interface FieldIssue {
  path: string;
  message: string;
}

/** 400 VALIDATION_ERROR; `fields` become `details.fields` so a client can point at the offending input. */
export function validationError(
  message: string,
  fields?: FieldIssue[],
  extra?: Record<string, unknown>,
): ApiError {
  const details = fields || extra ? { ...(fields ? { fields } : {}), ...extra } : undefined;
  return new ApiError(400, "invalid_request_error", "VALIDATION_ERROR", message, details);
}

export function badRequest(code: string, message: string, details?: Record<string, unknown>): ApiError {
  return new ApiError(400, "invalid_request_error", code, message, details);
}

export function notFound(message: string, details?: Record<string, unknown>): ApiError {
  return new ApiError(404, "not_found_error", "NOT_FOUND", message, details);
}

export function conflict(code: string, message: string, details?: Record<string, unknown>): ApiError {
  return new ApiError(409, "conflict_error", code, message, details);
}

export function forbidden(code: string, message: string, details?: Record<string, unknown>): ApiError {
  return new ApiError(403, "authorization_error", code, message, details);
}

export function unauthorized(code: "UNAUTHORIZED" | "NO_ACTIVE_API_KEY", message: string): ApiError {
  return new ApiError(401, "authentication_error", code, message);
}

/** Dotted path of a zod issue: `data.0.ownershipPercentage`; the root is `body`. */
export function issuePath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? "body" : path.map((p) => String(p)).join(".");
}

export function fromZodError(err: z.ZodError, what = "request body"): ApiError {
  const fields = err.issues.map((i) => ({ path: issuePath(i.path), message: i.message }));
  return validationError(
    `Invalid ${what}: ${fields.map((f) => `${f.path}: ${f.message}`).join("; ")}`,
    fields,
  );
}

/** Parse with a zod schema or throw a 400 VALIDATION_ERROR naming every failing field. */
export function parseOrThrow<T extends z.ZodTypeAny>(schema: T, value: unknown, what?: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw fromZodError(result.error, what);
  return result.data;
}
