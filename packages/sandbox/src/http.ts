/**
 * The sandbox's HTTP primitives (node:http, no framework): what a handler receives, what it answers,
 * body reading and JSON parsing. No business rule lives here.
 */
import type { IncomingMessage } from "node:http";
import { type ApiError, validationError } from "./errors.js";

/** Bodies above this are refused: a 10 MiB attachment is about 14 MiB of base64 plus JSON. */
export const MAX_BODY_BYTES = 15 * 1024 * 1024;

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Runs after the latency fault, just before the response is written (idempotency completion). */
  beforeSend?: (reply: Reply) => void;
  /**
   * What an idempotency record keeps instead of `body` (a created payment, whose replay is rendered
   * from it as created), so a record costs no copy of the response.
   */
  remember?: unknown;
  /** Destroy the connection instead of answering (dropAfterStore fault). */
  drop?: boolean;
}

/** One authenticated request, its path split after `/v2`. */
export interface RequestContext {
  method: string;
  segments: string[];
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  raw: Buffer;
  apiKey: string;
}

export const ok = (body: unknown, status = 200): Reply => ({ status, body });

export function errorReply(err: ApiError): Reply {
  return { status: err.status, body: err.toEnvelope(), ...(err.headers ? { headers: err.headers } : {}) };
}

export function header(headers: IncomingMessage["headers"], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw validationError("request body is not valid JSON", [
      { path: "body", message: `malformed JSON: ${(err as Error).message}` },
    ]);
  }
}

/** Reads the body; a too-large body is drained and reported instead of buffered. */
export async function readBody(req: IncomingMessage): Promise<Buffer | "too-large"> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) tooLarge = true;
    if (!tooLarge) chunks.push(chunk);
  }
  return tooLarge ? "too-large" : Buffer.concat(chunks);
}

export function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}
