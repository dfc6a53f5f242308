/** Small HTTP helpers for the sandbox conformance tests (real HTTP on 127.0.0.1, global fetch). */

import { randomUUID } from "node:crypto";
import type { RunningSandbox } from "@payouts/sandbox";
import { until } from "../../support/wait.js";

export interface CallOptions {
  body?: unknown;
  /** Raw body text sent as is (for malformed JSON). */
  rawBody?: string;
  /** Entity header; default "me"; null omits it. */
  entity?: string | null;
  /** api-key header; default the sandbox key; null omits it. */
  key?: string | null;
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  body: any;
  headers: Headers;
}

export async function call(
  sb: RunningSandbox,
  method: string,
  path: string,
  opts: CallOptions = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...opts.headers };
  const key = opts.key === undefined ? sb.apiKey : opts.key;
  if (key !== null) headers["api-key"] = key;
  const entity = opts.entity === undefined ? "me" : opts.entity;
  if (entity !== null) headers["service-entity-id"] = entity;
  if (opts.idempotencyKey !== undefined) headers["idempotency-key"] = opts.idempotencyKey;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${sb.url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

/** POST /payments with a fresh idempotency key unless one is given. */
export function createPayment(
  sb: RunningSandbox,
  body: Record<string, unknown>,
  opts: CallOptions = {},
): Promise<CallResult> {
  return call(sb, "POST", "/payments", { idempotencyKey: randomUUID(), ...opts, body });
}

export const ACH_PAYMENT = {
  amount: 12_500,
  originatingAccountId: "acct_ops_checking",
  receivingAccountId: "acct_vendor_ach",
  deliveryPreference: "standard-ach",
} as const;

/** Polls `check` every 10 ms until it returns a value (not undefined) or the deadline passes. */
export function waitFor<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 5000,
): Promise<T> {
  return until("a sandbox condition", check, timeoutMs, 10);
}

export function expectError(res: CallResult, status: number, type: string, code?: string): void {
  if (
    res.status !== status ||
    res.body?.error?.type !== type ||
    (code !== undefined && res.body?.error?.code !== code)
  ) {
    throw new Error(
      `expected ${status} ${type}${code ? `/${code}` : ""}, got ${res.status} ${JSON.stringify(res.body)}`,
    );
  }
  if (typeof res.body.error.message !== "string" || res.body.error.message.length === 0) {
    throw new Error("error envelope without message");
  }
}
