/** Shared set-up of the pipeline tests: a real Redis (unique key prefix per test), a real sandbox. */

import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { RunningSandbox } from "@payouts/sandbox";
import { achInstruction, deleteKeysUnder } from "../../../bench/lib/sample-rows.js";
import {
  type BatchStore,
  type RowJobRequest,
  type RowRecord,
  type SubmittedInstruction,
  submitBatch,
} from "../../../src/batches/index.js";
import { rowKeyOf } from "../../../src/intake/payout-instruction.js";
import type { Payment } from "../../../src/payouts-api/index.js";
import { createPayoutsClient, type PayoutsClient } from "../../../src/payouts-api/index.js";
import {
  createWorkerClient,
  openPipeline,
  type PaymentService,
  type Pipeline,
  paymentQueueEnqueuer,
  startPaymentService,
} from "../../../src/pipeline/index.js";
import type { RedisClient } from "../../../src/redis/index.js";

import { REDIS_URL, uniquePrefix } from "../../support/redis-keys.js";
import { PIPELINE_DEFAULTS } from "../../support/settings.js";

export { REDIS_URL, uniquePrefix };

/** Deletes every key under the prefix (never FLUSHALL: other tests share this Redis). */
export async function deleteKeys(redis: RedisClient, prefix: string): Promise<void> {
  await deleteKeysUnder(redis, prefix);
}

let rowCounter = 0;

/** A valid ACH instruction; override what a test needs. */
export function instruction(overrides: Partial<SubmittedInstruction> = {}): SubmittedInstruction {
  rowCounter++;
  const rowNumber = overrides.rowNumber ?? rowCounter + 1;
  const reference = "reference" in overrides ? overrides.reference : `REF-${randomBytes(5).toString("hex")}`;
  return {
    ...achInstruction(rowNumber, rowKeyOf(reference, rowNumber), reference, 10_000 + rowCounter),
    ...overrides,
  };
}

export function sha(): string {
  return randomBytes(32).toString("hex");
}

export interface SubmitExtras {
  fileSha256?: string;
  batchId?: string;
  attempts?: number;
  beforeEnqueue?: (batchId: string) => Promise<void>;
}

export interface PipelineHarness {
  prefix: string;
  pipeline: Pipeline;
  store: BatchStore;
  dataDir: string;
  /** A client for assertions (not the worker's). */
  api: PayoutsClient;
  startWorker(): Promise<PaymentService>;
  /**
   * Submits rows. `beforeEnqueue` runs after the rows are recorded and before their jobs are added
   * (to plant state a crashed earlier try would have left); `attempts` sets the jobs' tries.
   */
  submit(rows: SubmittedInstruction[], extra?: SubmitExtras): Promise<string>;
  close(): Promise<void>;
}

export async function pipelineHarness(
  sandbox: RunningSandbox,
  label: string,
  options: { feedWindow?: number } = {},
): Promise<PipelineHarness> {
  const prefix = uniquePrefix(label);
  const jobs = { attempts: 8, backoffMs: 50 };
  const feedWindow = options.feedWindow;
  const pipeline = openPipeline({
    ...PIPELINE_DEFAULTS,
    redisUrl: REDIS_URL,
    prefix,
    jobs,
    ...(feedWindow ? { feedWindow } : {}),
  });
  const dataDir = await mkdtemp(path.join(tmpdir(), "payouts-pipeline-"));
  const api = createPayoutsClient({ entityId: "me", baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  const services: PaymentService[] = [];
  return {
    prefix,
    pipeline,
    store: pipeline.store,
    dataDir,
    api,
    async startWorker() {
      const service = await startPaymentService({
        ...PIPELINE_DEFAULTS,
        redisUrl: REDIS_URL,
        prefix,
        jobs,
        ...(feedWindow ? { feedWindow } : {}),
        client: createWorkerClient({ apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: "me" }),
        concurrency: 8,
      });
      services.push(service);
      return service;
    },
    async submit(rows, extra = {}) {
      const real = paymentQueueEnqueuer(
        pipeline.queue,
        { ...jobs, attempts: extra.attempts ?? jobs.attempts },
        feedWindow ?? PIPELINE_DEFAULTS.feedWindow,
      );
      const held: RowJobRequest[] = [];
      const result = await submitBatch({
        store: pipeline.store,
        // Held jobs are added below: until then they count as the queue's backlog, in the same window.
        enqueuer: {
          enqueue: async (batch) => void held.push(...batch),
          backlog: async () => held.length + (await pipeline.enqueuer.backlog()),
          window: pipeline.enqueuer.window,
        },
        instructions: rows,
        fileSha256: extra.fileSha256 ?? sha(),
        sourceName: "test.csv",
        entityId: "me",
        dataDir,
        ...(extra.batchId ? { batchId: extra.batchId } : {}),
      });
      await extra.beforeEnqueue?.(result.batchId);
      await real.enqueue(held);
      return result.batchId;
    },
    async close() {
      await Promise.all(services.map((s) => s.stop(2000)));
      await pipeline.queue.obliterate({ force: true }).catch(() => undefined);
      await deleteKeys(pipeline.redis, prefix);
      await pipeline.close();
      await api.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls until every row has left `queued` (the pipeline's part is done), or fails after `timeoutMs`. */
export async function waitForRows(
  store: BatchStore,
  batchId: string,
  done: (row: RowRecord) => boolean = (r) => r.state !== "queued",
  timeoutMs = 20_000,
): Promise<RowRecord[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await store.listRows(batchId);
    if (rows.length > 0 && rows.every(done)) return rows;
    if (Date.now() > deadline) {
      const pending = rows.filter((r) => !done(r)).map((r) => `${r.rowKey}:${r.state}`);
      throw new Error(`rows not done in time: ${pending.slice(0, 10).join(", ")}`);
    }
    await sleep(100);
  }
}

export async function paymentsOfBatch(api: PayoutsClient, batchId: string): Promise<Payment[]> {
  const out: Payment[] = [];
  for await (const p of api.payments.listAll({ metadata: { payouts_batch: batchId } })) out.push(p);
  return out;
}

/**
 * Attempt 1 of a row's payment made on the service outside the worker (an earlier try, a try whose
 * answer was lost, a worker that stopped before writing the answer): same externalId, metadata naming
 * the row.
 */
export function paymentMadeEarlier(
  api: PayoutsClient,
  row: SubmittedInstruction,
  batchId: string,
  idempotencyKey: string,
): Promise<Payment> {
  return api.payments.create(
    {
      amount: row.amount,
      originatingAccountId: row.originatingAccountId,
      receivingAccountId: row.receivingAccountId,
      deliveryPreference: row.deliveryPreference,
      externalId: row.reference!,
      metadata: { payouts_batch: batchId, payouts_row: row.rowKey, payouts_attempt: "1" },
    },
    { idempotencyKey },
  );
}
