/** Public face of reconciliation: webhook-driven and swept look-ups that move rows forward. */
export {
  createReconcileProcessor,
  type ReconcileHooks,
  type ReconcileLogger,
  type ReconcileProcessor,
  type ReconcileProcessorOptions,
  type ReconcileResult,
} from "./reconcile-processor.js";
export {
  createReconcileQueue,
  DEFAULT_RECONCILE_DEBOUNCE_MS,
  RECONCILE_JOB_OPTIONS,
  RECONCILE_QUEUE_NAME,
  type ReconcileEnqueuer,
  type ReconcileJobData,
  reconcileDedupId,
  reconcileEnqueuer,
  reconcileJobOptions,
  SWEEP_SCHEDULER_ID,
} from "./reconcile-queue.js";
export {
  DEFAULT_RECONCILE_CONCURRENCY,
  DEFAULT_STALE_AFTER_MS,
  DEFAULT_SWEEP_EVERY_MS,
  type ReconcileService,
  type ReconcileServiceOptions,
  startReconcileService,
} from "./reconcile-service.js";
export { type SweepOptions, type SweepReport, sweepOnce } from "./sweep.js";
