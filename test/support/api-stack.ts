/**
 * Shared set-up of the tests that drive the HTTP API and the console in this process: a sandbox over
 * loopback, `startServer` and the payment worker on a real Redis under a unique prefix, optionally the
 * reconcile sweep with the sandbox's webhooks pointed at the server; and small callers of the API.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import type { ApprovalPolicy } from "../../src/approvals/index.js";
import { createPayoutsClient, type PayoutsClient } from "../../src/payouts-api/index.js";
import {
  connectRedis,
  createWorkerClient,
  type PaymentService,
  startPaymentService,
} from "../../src/pipeline/index.js";
import { type ReconcileService, startReconcileService } from "../../src/reconcile/index.js";
import { type RunningServer, startServer, WEBHOOK_PATH } from "../../src/server/index.js";
import { CONSUMED_EVENTS } from "../../src/webhooks/index.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../integration/pipeline/helpers.js";
import { PIPELINE_DEFAULTS, SERVER_DEFAULTS } from "./settings.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
export type Json = any;

export { until } from "./wait.js";

export interface ApiStackOptions {
  /** Names the Redis prefix and the temporary DATA_DIR. */
  label: string;
  /** How fast the sandbox moves payments on. */
  clock: { toInProgressMs: number; toFinalMs: number };
  /** The approval rules of the server and the worker; default: none (the setting's default). */
  approval?: ApprovalPolicy;
  uploadLimitBytes?: number;
  /** Payment jobs at a time. Default 4. */
  concurrency?: number;
  /** Also run the reconcile sweep, and register the server as the sandbox's webhook endpoint. */
  reconcile?: { sweepEveryMs: number; staleAfterMs: number };
  /** PAYOUTS_DUPLICATE_WINDOW_DAYS of the server; default the test run's (0: the sheet only). */
  duplicateWindowDays?: number;
}

export interface ApiStack {
  prefix: string;
  dir: string;
  sandbox: RunningSandbox;
  /** A client of the sandbox without retries (the server's, and the test's look at the ledger). */
  client: PayoutsClient;
  server: RunningServer;
  payments: PaymentService;
  reconcile: ReconcileService | undefined;
  /** The service's address and key, as the workers' settings take them. */
  api: { apiUrl: string; apiKey: string; entityId: string };
  /** Stops everything started, deletes the prefix's keys and the DATA_DIR. */
  close(): Promise<void>;
}

export async function startApiStack(options: ApiStackOptions): Promise<ApiStack> {
  const prefix = uniquePrefix(options.label);
  const sandbox = await startSandbox({ clock: options.clock });
  const client = createPayoutsClient({
    entityId: "me",
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    retry: { maxAttempts: 1 },
  });
  const dir = await mkdtemp(path.join(tmpdir(), `payouts-${options.label}-`));
  const approval = options.approval ? { approval: options.approval } : {};
  const server = await startServer({
    ...PIPELINE_DEFAULTS,
    ...SERVER_DEFAULTS,
    redisUrl: REDIS_URL,
    prefix,
    // The sandbox signs deliveries with its API key.
    webhookSecret: sandbox.apiKey,
    client,
    dataDir: dir,
    ...(options.uploadLimitBytes !== undefined ? { uploadLimitBytes: options.uploadLimitBytes } : {}),
    ...(options.duplicateWindowDays !== undefined
      ? { duplicateWindowDays: options.duplicateWindowDays }
      : {}),
    ...approval,
  });
  const api = { apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: "me" };
  const payments = await startPaymentService({
    ...PIPELINE_DEFAULTS,
    redisUrl: REDIS_URL,
    prefix,
    client: createWorkerClient(api),
    concurrency: options.concurrency ?? 4,
    ...approval,
  });
  let reconcile: ReconcileService | undefined;
  if (options.reconcile) {
    reconcile = await startReconcileService({
      redisUrl: REDIS_URL,
      prefix,
      client: createWorkerClient(api),
      ...options.reconcile,
    });
    await client.webhook.update({
      url: `${server.url}${WEBHOOK_PATH}`,
      events: [...CONSUMED_EVENTS],
      isActive: true,
    });
  }
  return {
    prefix,
    dir,
    sandbox,
    client,
    server,
    payments,
    reconcile,
    api,
    async close() {
      await reconcile?.stop(1000);
      await payments.stop(1000);
      await server.close(1000);
      const redis = connectRedis(REDIS_URL);
      await deleteKeys(redis, prefix);
      await redis.quit();
      await client.close();
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** `init` with `Authorization: Bearer <token>` added to its headers. */
export function withBearer(token: string | undefined, init: RequestInit = {}): RequestInit {
  if (token === undefined) return init;
  return {
    ...init,
    headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` },
  };
}

/** One API call with a JSON body (or none); the answer's status, JSON (when it is JSON), text and headers. */
export async function callApi(
  baseUrl: string,
  token: string | undefined,
  method: string,
  route: string,
  body?: unknown,
) {
  const init: RequestInit = {
    method,
    redirect: "manual",
    ...(body !== undefined
      ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } }
      : {}),
  };
  const res = await fetch(`${baseUrl}${route}`, withBearer(token, init));
  const text = await res.text();
  let json: Json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

/**
 * Uploads a sheet and submits it as a batch, as a user of the API does; the new batch's id. Throws,
 * with the answer, when either step is not a 201.
 */
export async function submitSheetThroughApi(
  baseUrl: string,
  token: string | undefined,
  name: string,
  content: string | Buffer,
): Promise<string> {
  const up = await uploadSheet(baseUrl, token, name, content);
  if (up.status !== 201) throw new Error(`upload of ${name}: ${up.status} ${JSON.stringify(up.json)}`);
  const submitted = await callApi(baseUrl, token, "POST", "/api/v1/batches", { sheetId: up.json.id });
  if (submitted.status !== 201)
    throw new Error(`submission of ${name}: ${submitted.status} ${JSON.stringify(submitted.json)}`);
  return submitted.json.id as string;
}

/** Uploads a sheet (`POST /api/v1/sheets`, multipart) as the token's holder. */
export async function uploadSheet(
  baseUrl: string,
  token: string | undefined,
  name: string,
  content: string | Buffer,
): Promise<{ status: number; json: Json }> {
  const form = new FormData();
  form.append("file", new Blob([content]), name);
  const res = await fetch(`${baseUrl}/api/v1/sheets`, withBearer(token, { method: "POST", body: form }));
  return { status: res.status, json: (await res.json()) as Json };
}
