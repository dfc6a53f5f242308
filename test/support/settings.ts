/**
 * The settings a test's parts are started with: the test run's environment read as a command reads
 * it (vitest.config.ts turns the cross-batch duplicate check off; everything else is at the schema's
 * default), so a test states only what it changes (its Redis, prefix, approval rules).
 */
import { loadConfig } from "../../src/config/index.js";
import type { PipelineSettings } from "../../src/pipeline/index.js";

export const DEFAULT_CONFIG = loadConfig();

/** The server's settings (DATA_DIR, PAYOUTS_ENTITY_ID, UPLOAD_LIMIT_MB, HTTP_TRUST_PROXY), at the run's values. */
export const SERVER_DEFAULTS = {
  dataDir: DEFAULT_CONFIG.dataDir,
  entityId: DEFAULT_CONFIG.entityId,
  uploadLimitBytes: DEFAULT_CONFIG.uploadLimitBytes,
  trustProxy: DEFAULT_CONFIG.trustProxy,
};

/** The pipeline settings beside Redis and the prefix, at their defaults. */
export const PIPELINE_DEFAULTS: Pick<
  PipelineSettings,
  "approval" | "feedWindow" | "duplicateWindowDays" | "dataDir"
> = {
  approval: DEFAULT_CONFIG.approval,
  feedWindow: DEFAULT_CONFIG.feedWindow,
  duplicateWindowDays: DEFAULT_CONFIG.duplicateWindowDays,
  dataDir: DEFAULT_CONFIG.dataDir,
};
