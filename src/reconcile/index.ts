/** Public face of reconciliation: webhook hints mark rows; looks read their payments by pages. */
export {
  type Claim,
  type DueMark,
  decodeHint,
  encodeHint,
  LOOSE_BATCH,
  type LookHint,
  LookIndex,
  type LookMark,
} from "./look-index.js";
export {
  type CreationWindow,
  creationWindows,
  type LookPlan,
  PAGE_SIZE,
  type PlacedRow,
  paymentsBetween,
  planLook,
  secondsToCount,
} from "./look-plan.js";
export {
  createLookRunner,
  DEFAULT_DRAINING_QUIET_MS,
  DEFAULT_RECONCILE_DEBOUNCE_MS,
  type LookReport,
  type LookRunner,
  type LookRunnerOptions,
} from "./look-runner.js";
export {
  createReconcileProcessor,
  PAYMENT_RETURNED,
  type ReconcileHooks,
  type ReconcileProcessor,
  type ReconcileProcessorOptions,
  type ReconcileResult,
  type ReturnedRow,
} from "./reconcile-processor.js";
export {
  createReconcileQueue,
  DUE_AT_ONCE_MS,
  type LookRequest,
  lookMarker,
  lookMarkOf,
  markForLook,
  RECONCILE_JOB_OPTIONS,
  RECONCILE_QUEUE_NAME,
  type ReconcileEnqueuer,
  type ReconcileJobData,
  SWEEP_SCHEDULER_ID,
  sweepSoon,
} from "./reconcile-queue.js";
export {
  DEFAULT_RECONCILE_CONCURRENCY,
  DEFAULT_STALE_AFTER_MS,
  DEFAULT_SWEEP_EVERY_MS,
  DEFAULT_WATCH_EVERY_MS,
  type ReconcileService,
  type ReconcileServiceOptions,
  startReconcileService,
} from "./reconcile-service.js";
export { type SweepOptions, type SweepReport, sweepOnce } from "./sweep.js";
