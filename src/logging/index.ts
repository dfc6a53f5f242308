export {
  type CreateLoggerOptions,
  configSecrets,
  createLogger,
  type Logger,
  type LogLevel,
  type LogSink,
  REDACT_PATHS,
} from "./logger.js";
export { REDACTED, redactSecrets, redactSecretsDeep } from "./redact-secrets.js";
