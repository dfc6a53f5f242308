/** Public face of nightly runs: the job scheduler service, one run, and its summary. */
export { type RunSummary, runSummaryFileName, summarizeRun } from "./run-summary.js";
export {
  SCHEDULED_RUN_QUEUE_NAME,
  SCHEDULED_RUN_SCHEDULER_ID,
  type ScheduleService,
  type ScheduleServiceOptions,
  startScheduleService,
} from "./schedule-service.js";
export { runScheduledSheets, type ScheduledRunOptions } from "./scheduled-run.js";
