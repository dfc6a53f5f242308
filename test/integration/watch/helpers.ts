/** Shared set-up of the watched-folder tests: unique sheets, a temporary DATA_DIR, waiting for outcomes. */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rename, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { RunningSandbox } from "@payouts/sandbox";
import type { Redis } from "ioredis";
import { DEFAULT_TIMEOUT_MS } from "../../../src/payouts-api/index.js";
import type { SheetIntakeOutcome } from "../../../src/watch/index.js";
import { PIPELINE_DEFAULTS } from "../../support/settings.js";
import { until } from "../../support/wait.js";
import { REDIS_URL } from "../pipeline/helpers.js";

export const VALID_SAMPLE = path.resolve("samples/payouts-valid.csv");
export const MISTAKES_SAMPLE = path.resolve("samples/payouts-mistakes.csv");
/** Valid rows of samples/payouts-valid.csv. */
export const VALID_SAMPLE_ROWS = 23;

/**
 * The valid sample with fresh references: its own content (so no DUPLICATE_FILE with other tests)
 * and its own externalIds (so the sandbox never sees a reused reference). Its one attachment file
 * is dropped: a dropped sheet's attachment paths do not follow it into processing/ (use att_ ids).
 */
export async function uniqueValidSheet(): Promise<string> {
  const text = await readFile(VALID_SAMPLE, "utf8");
  return text
    .replaceAll("PAY-2404-", `W${randomBytes(4).toString("hex")}-`)
    .replace("attachments/invoice-mxn-0001.pdf", "");
}

/**
 * What every watcher or nightly run under test is started with: its DATA_DIR and Redis prefix, the
 * sandbox as the API (entity "me"), and this run's Redis. Each test adds its own timings.
 */
export function sandboxIntake(sandbox: RunningSandbox, dataDir: string, prefix: string) {
  return {
    apiUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    entityId: "me",
    apiTimeoutMs: DEFAULT_TIMEOUT_MS,
    pipeline: { ...PIPELINE_DEFAULTS, redisUrl: REDIS_URL, prefix, dataDir },
  };
}

export async function tempDataDir(label: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), `payouts-${label}-`));
  await mkdir(path.join(dir, "inbox"), { recursive: true });
  return dir;
}

/** Writes a file elsewhere and renames it in, so it appears complete at once (as a "move" does). */
export async function dropFile(folder: string, name: string, content: string | Buffer): Promise<string> {
  await mkdir(folder, { recursive: true });
  const staging = path.join(folder, `.staging-${randomBytes(4).toString("hex")}.tmp`);
  await writeFile(staging, content);
  const target = path.join(folder, name);
  await rename(staging, target);
  return target;
}

/** Collects intake outcomes and waits for the ones a test expects. */
export class OutcomeLog {
  readonly outcomes: SheetIntakeOutcome[] = [];
  readonly push = (o: SheetIntakeOutcome) => {
    this.outcomes.push(o);
  };
  of(file: string): SheetIntakeOutcome[] {
    return this.outcomes.filter((o) => o.file === file);
  }
  /** The first accepted or rejected outcome of `file`. */
  settled(file: string, timeoutMs?: number): Promise<SheetIntakeOutcome> {
    return until(
      `${file} to be accepted or rejected`,
      () => this.of(file).find((o) => o.kind === "accepted" || o.kind === "rejected"),
      timeoutMs,
    );
  }
}

/** Batch ids recorded under a prefix. */
export async function batchIds(redis: Redis, prefix: string): Promise<string[]> {
  return redis.zrange(`${prefix}:batches`, 0, -1);
}
