/**
 * What the retries tests share: the stack they run on, the reconcile worker's part done by polling,
 * and editing a result file.
 */

import { rm } from "node:fs/promises";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import {
  adoptPayment,
  type BatchStore,
  type RowRecord,
  rowStateForPayment,
} from "../../../src/batches/index.js";
import { createPayoutsClient, type PayoutsClient } from "../../../src/payouts-api/index.js";
import {
  createWorkerClient,
  openPipeline,
  type PaymentService,
  type Pipeline,
  type PipelineSettings,
  startPaymentService,
} from "../../../src/pipeline/index.js";
import { externalIdFor } from "../../../src/row-identity/index.js";
import { createSheetIntake, type SheetIntake } from "../../../src/watch/index.js";
import { PIPELINE_DEFAULTS } from "../../support/settings.js";
import { until } from "../../support/wait.js";
import { deleteKeys, paymentsOfBatch, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";
import { dropFile, tempDataDir } from "../watch/helpers.js";

/**
 * What the reconcile worker does, done here by polling the sandbox: each row takes on the state of
 * its current attempt's payment. Resolves once `done` holds for every row.
 */
export async function followPayments(
  api: PayoutsClient,
  store: BatchStore,
  batchId: string,
  done: (rows: RowRecord[]) => boolean,
): Promise<RowRecord[]> {
  return until(
    "the rows to reach their payments' states",
    async () => {
      const payments = await paymentsOfBatch(api, batchId);
      for (const row of await store.listRows(batchId)) {
        const externalId = externalIdFor({
          batchId,
          rowNumber: row.rowNumber,
          reference: row.instruction.reference,
          attempt: row.attempt,
        });
        const payment = payments.find((p) => p.externalId === externalId);
        if (payment && row.state !== rowStateForPayment(payment.status)) {
          await adoptPayment(store, row, payment, "test reconcile");
        }
      }
      const rows = await store.listRows(batchId);
      return done(rows) ? rows : undefined;
    },
    30_000,
  );
}

/** Replaces one row's cells in a CSV result file (rows found by their reference in the first cell). */
export function editRow(csv: string, reference: string, edit: (cells: string[]) => void): string {
  return csv
    .split(/\r?\n/)
    .map((line) => {
      const cells = line.split(",");
      if (cells[0] !== reference) return line;
      edit(cells);
      return cells.join(",");
    })
    .join("\r\n");
}

/** What the result-file and correction tests run on: the sandbox, a pipeline, the worker and the watched folder. */
export interface RetryStack {
  sandbox: RunningSandbox;
  api: PayoutsClient;
  pipeline: Pipeline;
  /** The settings the pipeline, the worker and the folder were started with. */
  settings: PipelineSettings;
  intake: SheetIntake;
  dataDir: string;
  prefix: string;
  /** Drops a file into inbox/ and takes it at once. */
  dropAndTake(name: string, content: string | Buffer): ReturnType<SheetIntake["take"]>;
  close(): Promise<void>;
}

/**
 * Starts the stack under a unique prefix and a temporary DATA_DIR (sandbox amounts ending .13 fail),
 * with the pipeline settings given (approval rules, the duplicate window).
 */
export async function startRetryStack(
  label: string,
  settings: Partial<Pick<PipelineSettings, "approval" | "duplicateWindowDays">> = {},
): Promise<RetryStack> {
  const sandbox = await startSandbox({ clock: { toInProgressMs: 50, toFinalMs: 50 } });
  const api = createPayoutsClient({ entityId: "me", baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  const dataDir = await tempDataDir(label);
  const prefix = uniquePrefix(label);
  const pipelineSettings = { ...PIPELINE_DEFAULTS, redisUrl: REDIS_URL, prefix, dataDir, ...settings };
  const pipeline = openPipeline(pipelineSettings);
  const worker: PaymentService = await startPaymentService({
    ...pipelineSettings,
    client: createWorkerClient({ apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: "me" }),
    concurrency: 4,
  });
  const intake = await createSheetIntake({ api, pipeline: pipelineSettings, entityId: "me" });
  return {
    sandbox,
    api,
    pipeline,
    settings: pipelineSettings,
    intake,
    dataDir,
    prefix,
    async dropAndTake(name, content) {
      await dropFile(intake.folders.inbox, name, content);
      return intake.take(intake.folders.inbox, name);
    },
    async close() {
      await intake.close();
      await worker.stop(2000);
      await pipeline.queue.obliterate({ force: true }).catch(() => undefined);
      await deleteKeys(pipeline.redis, prefix);
      await pipeline.close();
      await api.close();
      await sandbox.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
