/**
 * The environment, read once by the command line (src/cli) and validated in one place
 * (docs/operating.md "Configuration"); the resulting config is handed down (src/app), and no other
 * module reads the environment.
 *
 * Every setting has its default here, in the schema (a default whose reason belongs to a module is
 * that module's constant, named here); docs/operating.md lists the same table, and tests keep them in
 * agreement and keep every part from falling back to a default of its own. A bad value is a usage
 * error (exit 2) whose message names the variable and what is expected, and never echoes a secret's
 * value.
 */
import path from "node:path";
import { CronExpressionParser } from "cron-parser";
import { z } from "zod";
import {
  type ApprovalPolicy,
  ApprovalRuleError,
  DEFAULT_APPROVAL_EXPIRES_HOURS,
  DEFAULT_APPROVALS_REQUIRED,
  parseApprovalExpiresHours,
  parseApprovalsRequired,
  parseApprovalThresholds,
} from "../approvals/rules.js";
import { type BreakerSettings, DEFAULT_BREAKER } from "../batch-control/index.js";
import { FEED_WINDOW } from "../batches/index.js";
import { PayoutsError } from "../errors/index.js";
import { DEFAULT_TIMEOUT_MS } from "../payouts-api/client.js";
import { type ClusterNode, parseClusterNodes } from "../redis/cluster-nodes.js";
import type { SheetLimits } from "../sheets/index.js";
import { DEFAULT_UPLOAD_KEEP, type UploadKeep } from "../uploads/upload-store.js";

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

const url = (name: string) =>
  z.string().refine((v) => {
    try {
      new URL(v);
      return true;
    } catch {
      return false;
    }
  }, `${name} must be an absolute URL`);

const intFrom = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const EnvSchema = z.object({
  PAYOUTS_API_URL: url("PAYOUTS_API_URL").optional(),
  PAYOUTS_API_KEY: z.string().min(1).optional(),
  PAYOUTS_ENTITY_ID: z
    .string()
    .regex(/^(me|ent_[A-Za-z0-9_-]+)$/, "PAYOUTS_ENTITY_ID must be `me` or an ent_ id")
    .default("me"),
  PAYOUTS_WEBHOOK_SECRET: z.string().min(1).optional(),
  REDIS_URL: url("REDIS_URL").default("redis://127.0.0.1:6379"),
  /** A Redis Cluster's seed nodes, `host:port,host:port`: every connection becomes a cluster connection. */
  REDIS_CLUSTER_NODES: z
    .string()
    .superRefine((v, ctx) => {
      try {
        parseClusterNodes(v);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
      }
    })
    .optional(),
  DATA_DIR: z.string().min(1).default("./data"),
  HTTP_PORT: intFrom(0, 65535).default(3000),
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info"),
  PAYOUTS_API_TIMEOUT_MS: intFrom(100, 600_000).default(DEFAULT_TIMEOUT_MS),
  WORKER_CONCURRENCY: intFrom(1, 256).default(8),
  /**
   * Ceiling on requests per second to the service, shared by every process on one Redis (the one
   * limiter, src/payouts-api/shared-rate-limit.ts).
   */
  PAYOUTS_RATE_LIMIT_PER_SECOND: intFrom(1, 100_000).default(50),
  /**
   * Payment jobs waiting in the queue at once; batches are fed as jobs finish (src/batches/batch-feeder.ts
   * holds the default and says why). Every process that opens the payment queue keeps the same window.
   */
  PAYOUTS_FEED_WINDOW: intFrom(1, 1_000_000).default(FEED_WINDOW),
  /**
   * How many days back a row paying the same payee the same amount from the same account as a row of an
   * earlier batch is a possible duplicate (docs/design.md §3.13); 0 checks only within the sheet.
   */
  PAYOUTS_DUPLICATE_WINDOW_DAYS: intFrom(0, 3650).default(30),
  /** The watched folder's quiet period and concurrency (defaults and why: src/watch). */
  WATCH_STABLE_MS: intFrom(100, 86_400_000).optional(),
  WATCH_CONCURRENCY: intFrom(1, 256).optional(),
  SCHEDULE_CRON: z.string().min(1).optional(),
  SCHEDULE_TZ: z.string().min(1).default("UTC"),
  NOTIFY_URL: url("NOTIFY_URL").optional(),
  /** Checked by approvalPolicyFrom (src/approvals/rules.ts), which names the bad item. */
  APPROVAL_THRESHOLDS: z.string().optional(),
  APPROVALS_REQUIRED: z.string().optional(),
  APPROVAL_EXPIRES_HOURS: z.string().optional(),
  /** Where `payouts approve|reject` reach `payouts serve` (default http://127.0.0.1:<HTTP_PORT>). */
  PAYOUTS_SERVER_URL: url("PAYOUTS_SERVER_URL").optional(),
  /** The bearer token `payouts approve|reject` authenticate with. Never logged or echoed. */
  PAYOUTS_TOKEN: z.string().min(1).optional(),
  /** Largest sheet the console and API accept, in MB. */
  UPLOAD_LIMIT_MB: intFrom(1, 10_000).default(50),
  /** Hours an upload not submitted stays (its rows are the largest thing the console keeps in Redis). */
  UPLOAD_KEEP_HOURS: intFrom(1, 24 * 366).default(DEFAULT_UPLOAD_KEEP.openSeconds / 3600),
  /** Days a submitted upload's record (its page and link to the batch) stays. */
  UPLOAD_KEEP_SUBMITTED_DAYS: intFrom(1, 3660).default(DEFAULT_UPLOAD_KEEP.submittedSeconds / 86_400),
  /** `true` behind a proxy that sets X-Forwarded-For/-Proto (client IPs, Secure cookies behind https). */
  HTTP_TRUST_PROXY: z.enum(["true", "false"]).default("false"),
  /** `payouts worker` serves /metrics on this port (0: off). */
  METRICS_PORT: intFrom(0, 65535).default(0),
  /**
   * Days a finished batch stays watched for returns (a completed payment the service later reports
   * failed or canceled: ACH returns come up to 60 days later); 0: not watched.
   */
  PAYOUTS_RETURN_WATCH_DAYS: intFrom(0, 3650).default(60),
  // The circuit breaker (src/batch-control/breaker.ts holds the defaults and says why); 0 turns a rule off.
  PAYOUTS_BREAKER_SAME_CODE: intFrom(0, 1_000_000).default(DEFAULT_BREAKER.sameCode),
  PAYOUTS_BREAKER_WINDOW: intFrom(1, 10_000).default(DEFAULT_BREAKER.window),
  PAYOUTS_BREAKER_FAILURES: intFrom(0, 10_000).default(DEFAULT_BREAKER.failures),
  // Reading limits for every sheet (src/sheets/limits.ts holds the defaults and says why).
  SHEET_MAX_FILE_MB: intFrom(1, 1_000_000).optional(),
  SHEET_MAX_PART_MB: intFrom(1, 4095).optional(),
  SHEET_MAX_SMALL_PART_MB: intFrom(1, 4095).optional(),
  SHEET_MAX_INFLATE_RATIO: intFrom(2, 1_000_000).optional(),
  SHEET_MAX_CELL_CHARS: intFrom(255, 100_000_000).optional(),
  SHEET_MAX_ROW_CHARS: intFrom(1024, 500_000_000).optional(),
  SHEET_READ_TIMEOUT_MS: intFrom(1000, 86_400_000).optional(),
  SHEET_READ_MAX_MEMORY_MB: intFrom(64, 1_000_000).optional(),
});

/** Every setting's name, as docs/operating.md's settings table must list them. */
export const SETTING_NAMES: readonly string[] = Object.keys(EnvSchema.shape);

/** The default a setting takes when unset, where the schema holds it (undefined: unset or set elsewhere). */
export function settingDefault(name: string): unknown {
  const schema = EnvSchema.shape[name as keyof typeof EnvSchema.shape];
  const parsed = schema?.safeParse(undefined);
  return parsed?.success ? parsed.data : undefined;
}

export interface AppConfig {
  /** Base URL of the Partner Payouts Service, ending in /v2; undefined means "use the embedded sandbox" where allowed. */
  apiUrl: string | undefined;
  apiKey: string | undefined;
  entityId: string;
  /** The webhook signing secret; the spec keys signatures with the partner's API key, so that is the default. */
  webhookSecret: string | undefined;
  redisUrl: string;
  /** REDIS_URL was set (not the default): `payouts demo` starts a private redis-server otherwise. */
  redisUrlGiven: boolean;
  /** REDIS_CLUSTER_NODES parsed: set, every connection is to this Redis Cluster (src/redis). */
  redisClusterNodes: ClusterNode[] | undefined;
  dataDir: string;
  httpPort: number;
  logLevel: (typeof LOG_LEVELS)[number];
  apiTimeoutMs: number;
  workerConcurrency: number;
  /** Requests per second to the service, across every process (the shared rate limit). */
  rateLimitPerSecond: number;
  /** Rows waiting in the queue's payment jobs at once (PAYOUTS_FEED_WINDOW). */
  feedWindow: number;
  /** Days back a row of an earlier batch makes a possible duplicate (PAYOUTS_DUPLICATE_WINDOW_DAYS). */
  duplicateWindowDays: number;
  /** WATCH_STABLE_MS and WATCH_CONCURRENCY, for the inbox and the nightly run (unset: src/watch's defaults). */
  watch: { stableMs?: number; concurrency?: number };
  scheduleCron: string | undefined;
  scheduleTz: string;
  notifyUrl: string | undefined;
  /** Which batches wait for approval, by how many approvers, for how long (docs/design.md §3.10). */
  approval: ApprovalPolicy;
  /** Base URL of `payouts serve` for the commands that go through its API (approve, reject). */
  serverUrl: string;
  /** Bearer token of those commands. */
  token: string | undefined;
  uploadLimitBytes: number;
  /** How long uploads stay in Redis (src/uploads holds the defaults and says why). */
  uploadKeep: UploadKeep;
  trustProxy: boolean;
  metricsPort: number;
  /** Days a finished batch stays watched for returns (0: not watched). */
  returnWatchDays: number;
  /** When a batch whose rows keep being refused pauses itself. */
  breaker: BreakerSettings;
  /** Overrides of the sheet reading limits (unset: the defaults of src/sheets/limits.ts). */
  sheetLimits: Partial<SheetLimits>;
}

const MiB = 1024 * 1024;
const mib = (n: number | undefined) => (n === undefined ? undefined : n * MiB);

export class ConfigError extends PayoutsError {
  override readonly name = "ConfigError";
  constructor(message: string) {
    super("INVALID_SETTING", message, { kind: "usage" });
  }
}

/** Reads and validates the environment. Throws ConfigError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  // Blank values count as unset: `FOO= payouts ...` should mean the default, not an error.
  const present = Object.fromEntries(
    Object.entries(env).filter(([k, v]) => k in EnvSchema.shape && v !== undefined && v.trim() !== ""),
  );
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const name = String(i.path[0]);
      return `  ${name}: ${i.message}`;
    });
    throw new ConfigError(`Invalid environment:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  if (e.SCHEDULE_CRON) checkSchedule(e.SCHEDULE_CRON, e.SCHEDULE_TZ);
  const approval = approvalPolicyFrom(e);
  return {
    apiUrl: e.PAYOUTS_API_URL?.replace(/\/+$/, ""),
    apiKey: e.PAYOUTS_API_KEY,
    entityId: e.PAYOUTS_ENTITY_ID,
    webhookSecret: e.PAYOUTS_WEBHOOK_SECRET ?? e.PAYOUTS_API_KEY,
    redisUrl: e.REDIS_URL,
    redisUrlGiven: "REDIS_URL" in present,
    redisClusterNodes: e.REDIS_CLUSTER_NODES ? parseClusterNodes(e.REDIS_CLUSTER_NODES) : undefined,
    dataDir: path.resolve(e.DATA_DIR),
    httpPort: e.HTTP_PORT,
    logLevel: e.LOG_LEVEL,
    apiTimeoutMs: e.PAYOUTS_API_TIMEOUT_MS,
    workerConcurrency: e.WORKER_CONCURRENCY,
    rateLimitPerSecond: e.PAYOUTS_RATE_LIMIT_PER_SECOND,
    feedWindow: e.PAYOUTS_FEED_WINDOW,
    duplicateWindowDays: e.PAYOUTS_DUPLICATE_WINDOW_DAYS,
    watch: {
      ...(e.WATCH_STABLE_MS === undefined ? {} : { stableMs: e.WATCH_STABLE_MS }),
      ...(e.WATCH_CONCURRENCY === undefined ? {} : { concurrency: e.WATCH_CONCURRENCY }),
    },
    scheduleCron: e.SCHEDULE_CRON,
    scheduleTz: e.SCHEDULE_TZ,
    notifyUrl: e.NOTIFY_URL,
    approval,
    serverUrl: (e.PAYOUTS_SERVER_URL ?? `http://127.0.0.1:${e.HTTP_PORT}`).replace(/\/+$/, ""),
    token: e.PAYOUTS_TOKEN,
    uploadLimitBytes: e.UPLOAD_LIMIT_MB * 1024 * 1024,
    uploadKeep: {
      openSeconds: e.UPLOAD_KEEP_HOURS * 3600,
      submittedSeconds: e.UPLOAD_KEEP_SUBMITTED_DAYS * 86_400,
    },
    trustProxy: e.HTTP_TRUST_PROXY === "true",
    metricsPort: e.METRICS_PORT,
    returnWatchDays: e.PAYOUTS_RETURN_WATCH_DAYS,
    breaker: {
      sameCode: e.PAYOUTS_BREAKER_SAME_CODE,
      window: e.PAYOUTS_BREAKER_WINDOW,
      failures: e.PAYOUTS_BREAKER_FAILURES,
    },
    sheetLimits: {
      maxFileBytes: mib(e.SHEET_MAX_FILE_MB),
      maxPartBytes: mib(e.SHEET_MAX_PART_MB),
      maxSmallPartBytes: mib(e.SHEET_MAX_SMALL_PART_MB),
      maxInflateRatio: e.SHEET_MAX_INFLATE_RATIO,
      maxCellChars: e.SHEET_MAX_CELL_CHARS,
      maxRowChars: e.SHEET_MAX_ROW_CHARS,
      readTimeoutMs: e.SHEET_READ_TIMEOUT_MS,
      readMaxMemoryMb: e.SHEET_READ_MAX_MEMORY_MB,
    },
  };
}

function approvalPolicyFrom(e: {
  APPROVAL_THRESHOLDS?: string | undefined;
  APPROVALS_REQUIRED?: string | undefined;
  APPROVAL_EXPIRES_HOURS?: string | undefined;
}): ApprovalPolicy {
  const setting = <T>(name: string, text: string | undefined, parse: (t: string) => T, fallback: T): T => {
    if (text === undefined) return fallback;
    try {
      return parse(text);
    } catch (err) {
      if (err instanceof ApprovalRuleError)
        throw new ConfigError(`Invalid environment:\n  ${name}: ${err.message}`);
      throw err;
    }
  };
  return {
    thresholds: setting("APPROVAL_THRESHOLDS", e.APPROVAL_THRESHOLDS, parseApprovalThresholds, []),
    required: setting(
      "APPROVALS_REQUIRED",
      e.APPROVALS_REQUIRED,
      parseApprovalsRequired,
      DEFAULT_APPROVALS_REQUIRED,
    ),
    expiresHours: setting(
      "APPROVAL_EXPIRES_HOURS",
      e.APPROVAL_EXPIRES_HOURS,
      parseApprovalExpiresHours,
      DEFAULT_APPROVAL_EXPIRES_HOURS,
    ),
  };
}

/** A schedule that cannot fire is a usage error at start, not a crash at the first scheduler call. */
function checkSchedule(cron: string, tz: string): void {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
  } catch {
    throw new ConfigError(
      `Invalid environment:\n  SCHEDULE_TZ: "${tz}" is not an IANA time zone (e.g. Europe/Paris)`,
    );
  }
  try {
    CronExpressionParser.parse(cron, { tz }).next();
  } catch (err) {
    throw new ConfigError(
      `Invalid environment:\n  SCHEDULE_CRON: "${cron}" is not a cron pattern (${(err as Error).message}); ` +
        "use 5 fields (minute hour day month weekday), or 6 with seconds first",
    );
  }
}

/** The API connection, or a ConfigError saying which variables to set. */
export function requireApi(
  config: AppConfig,
  hint = "(or run `payouts sandbox` and point PAYOUTS_API_URL at it)",
): { apiUrl: string; apiKey: string; entityId: string } {
  const missing = [!config.apiUrl && "PAYOUTS_API_URL", !config.apiKey && "PAYOUTS_API_KEY"].filter(Boolean);
  if (missing.length > 0) {
    throw new ConfigError(
      `${missing.join(" and ")} must be set to reach the Partner Payouts Service ${hint}`,
    );
  }
  return { apiUrl: config.apiUrl!, apiKey: config.apiKey!, entityId: config.entityId };
}
