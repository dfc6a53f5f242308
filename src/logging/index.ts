export {
  type CreateLoggerOptions,
  createLogger,
  type Logger,
  type LogLevel,
  REDACT_PATHS,
} from "./logger.js";
export { REDACTED, redactSecrets, redactSecretsDeep } from "./redact-secrets.js";
