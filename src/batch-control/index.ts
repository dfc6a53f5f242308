/**
 * Stopping a batch (pause, resume, cancel) and the circuit breaker that pauses a batch whose rows keep
 * being refused for one reason.
 */
export {
  type BatchPausedEvent,
  type Breaker,
  type BreakerCounts,
  type BreakerSettings,
  type BreakerVerdict,
  breakerVerdict,
  countOutcome,
  createBreaker,
  DEFAULT_BREAKER,
} from "./breaker.js";
export {
  BATCH_CANCELED,
  BATCH_PAUSED,
  type BatchStop,
  BREAKER_ACTOR,
  type CancelOutcome,
  cancelBatch,
  pauseBatch,
  readStop,
  resumeBatch,
  type StopRefusal,
  StopRefusedError,
  withPauseShown,
} from "./stop-batch.js";
