/**
 * The config (src/config) turned into the settings each part takes: the one place where a setting
 * becomes a parameter, so no part below reads the environment or applies a default of its own.
 */
import type { AppConfig } from "../config/index.js";
import type { LogSink } from "../logging/index.js";
import type { PipelineSettings } from "../pipeline/index.js";
import type { IntakeConnection } from "../watch/index.js";

/** The pipeline of the installation under `prefix`: Redis, approval rules, feed and duplicate windows. */
export function pipelineSettings(
  config: AppConfig,
  prefix: string,
  more: Pick<PipelineSettings, "failFast"> = {},
): PipelineSettings {
  return {
    redisUrl: config.redisUrl,
    redisClusterNodes: config.redisClusterNodes,
    prefix,
    approval: config.approval,
    feedWindow: config.feedWindow,
    duplicateWindowDays: config.duplicateWindowDays,
    dataDir: config.dataDir,
    ...more,
  };
}

/** What the watched folder and the nightly run need to read sheets and submit them. */
export function intakeConnection(
  config: AppConfig,
  api: { apiUrl: string; apiKey: string; entityId: string },
  prefix: string,
  logger: LogSink,
): IntakeConnection {
  return {
    ...api,
    apiTimeoutMs: config.apiTimeoutMs,
    pipeline: pipelineSettings(config, prefix),
    logger,
  };
}
