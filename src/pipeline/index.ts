/** Public face of the payment pipeline: the queue, the job processor, the worker and their wiring. */

export { connectRedis } from "../redis/index.js";
export { bodyHash, needsFxQuote, paymentBodyFor } from "./payment-body.js";
export {
  createPaymentProcessor,
  HandBackError,
  type JobRun,
  type PaymentProcessor,
  type PaymentProcessorOptions,
  type ProcessResult,
  RowOutcomeError,
} from "./payment-processor.js";
export {
  bullPrefix,
  createPaymentQueue,
  PAYMENT_QUEUE_NAME,
  type PaymentJobData,
  type PaymentRowRef,
  paymentJobOptions,
  paymentJobsFor,
  paymentQueueEnqueuer,
  QUEUE_EVENTS_KEPT,
  quietQueue,
  ROWS_PER_JOB,
  rowsOfJob,
} from "./payment-queue.js";
export {
  closeWorkerWithin,
  createPaymentWorker,
  isJobGivenUp,
  PaymentRowsError,
  type PaymentWorkerOptions,
  type RowTryOutcome,
} from "./payment-worker.js";
export {
  createWorkerClient,
  DEFAULT_SHUTDOWN_GRACE_MS,
  isRedisUnavailable,
  openPipeline,
  type PaymentService,
  type PaymentServiceOptions,
  type Pipeline,
  type PipelineSettings,
  SubmissionNotKeptError,
  shutdownBudget,
  startPaymentService,
  submitToPipeline,
} from "./pipeline-runtime.js";
