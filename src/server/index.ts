/** Public face of the HTTP server of `payouts serve`: webhooks, health, metrics, result downloads. */
export { type HealthCheck, type HealthReport, runHealthChecks } from "./health.js";
export {
  createHttpServer,
  DEFAULT_BODY_LIMIT_BYTES,
  type HttpServerOptions,
  listen,
  type RunningHttpServer,
  WEBHOOK_PATH,
} from "./http-server.js";
export { type DeliveryOutcome, ServerMetrics } from "./metrics.js";
export type { ResultFileSource, ResultFormat } from "./result-download.js";
export { type RunningServer, type ServerOptions, startServer } from "./serve.js";
export {
  createWebhookReceiver,
  DEFAULT_DEDUPE_TTL_SECONDS,
  type ReceiverAnswer,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from "./webhook-receiver.js";
