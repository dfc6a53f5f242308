/** Everything the HTTP API works with, built once by `startServer` (or a test) and passed in. */
import type { Queue } from "bullmq";
import type { AuditTrail } from "../audit/index.js";
import type { AuthStore } from "../auth/index.js";
import type { BatchStore, RowEnqueuer } from "../batches/index.js";
import type { IntakeApi } from "../intake/index.js";
import type { PayoutsClient } from "../payouts-api/index.js";
import type { PipelineSettings } from "../pipeline/index.js";
import type { ReconcileEnqueuer } from "../reconcile/index.js";
import type { RedisClient } from "../redis/index.js";
import type { UploadKeep } from "../uploads/index.js";

export interface ApiContext {
  auth: AuthStore;
  audit: AuditTrail;
  /** A plain connection (uploads, indexes, event feed). */
  redis: RedisClient;
  /** Key prefix of the working state (default `payouts`). */
  prefix: string;
  store: BatchStore;
  /** New attempts of retried rows go here (the payment queue). */
  enqueuer: RowEnqueuer;
  /** Payment and reconcile queues: the queue view and the queue-depth metric. */
  queues: Queue[];
  /** After a cancel, the payment is looked at again so the row shows `canceled` soon. */
  reconcile: ReconcileEnqueuer;
  /**
   * Asks a worker for a sweep now: a canceled or rejected batch finishes (final file, notification) at
   * once. Never rejects: without it the batch finishes at the next periodic sweep.
   */
  sweepSoon: () => Promise<void>;
  /** Validation (live accounts) and cancels. */
  client: PayoutsClient & IntakeApi;
  /** Where submitted batches go (as `payouts submit`); its `dataDir` is DATA_DIR (uploads too). */
  pipeline: PipelineSettings;
  entityId: string;
  uploadLimitBytes: number;
  /** How long uploads stay in Redis; default src/uploads' DEFAULT_UPLOAD_KEEP. */
  uploadKeep?: UploadKeep;
}
