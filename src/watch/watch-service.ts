/**
 * The watched folder as a service (`payouts watch`, and part of `payouts worker`): an API client for
 * validation, the shared sheet intake, and the folder watcher over DATA_DIR/inbox/.
 */

import type { LogSink } from "../logging/index.js";
import { createPayoutsClient, type PayoutsClient } from "../payouts-api/index.js";
import type { PipelineSettings } from "../pipeline/index.js";
import { startFolderWatcher } from "./folder-watcher.js";
import { createSheetIntake, type SheetIntake, type SheetIntakeOutcome } from "./sheet-intake.js";

/** How the intake reaches the API and the pipeline; what both the watcher and the nightly run need. */
export interface IntakeConnection {
  apiUrl: string;
  apiKey: string;
  entityId: string;
  /** PAYOUTS_API_TIMEOUT_MS: every command that reads sheets passes the configured one. */
  apiTimeoutMs: number;
  /** Where the sheets go: the pipeline's Redis, prefix and settings (from the config). */
  pipeline: PipelineSettings;
  logger?: LogSink;
  /** See DEFAULT_LEASE_MS in sheet-intake.ts. */
  leaseMs?: number;
}

/** A sheet intake with its own API client; `close()` stops the intake (see `SheetIntake.stop`) and ends the client. */
export async function openSheetIntake(
  connection: IntakeConnection,
): Promise<{ intake: SheetIntake; client: PayoutsClient; close(): Promise<void> }> {
  const client = createPayoutsClient({
    baseUrl: connection.apiUrl,
    apiKey: connection.apiKey,
    entityId: connection.entityId,
    timeoutMs: connection.apiTimeoutMs,
  });
  try {
    const intake = await createSheetIntake({
      api: client,
      pipeline: connection.pipeline,
      entityId: connection.entityId,
      ...(connection.logger ? { logger: connection.logger } : {}),
      ...(connection.leaseMs !== undefined ? { leaseMs: connection.leaseMs } : {}),
    });
    return {
      intake,
      client,
      close: async () => {
        await intake.close();
        await client.close();
      },
    };
  } catch (err) {
    await client.close();
    throw err;
  }
}

export interface WatchServiceOptions extends IntakeConnection {
  /** The quiet period: a file untouched this long is complete. Default DEFAULT_STABLE_MS (stability.ts). */
  stableMs?: number;
  /** Time between rescans of inbox/ and processing/. Default 10 000 ms. */
  rescanMs?: number;
  /** Sheets taken at once. Default DEFAULT_WATCH_CONCURRENCY (folder-watcher.ts). */
  concurrency?: number;
  onOutcome?: (outcome: SheetIntakeOutcome) => void;
}

export interface WatchService {
  /** The folder watched (DATA_DIR/inbox). */
  folder: string;
  intake: SheetIntake;
  /**
   * Stops watching and closes the API client. A sheet still being read in its thread is left at once
   * (it stays in processing/ for the next start); one already being submitted is let finish. Idempotent.
   */
  stop(): Promise<void>;
}

/** Starts watching; resolves once abandoned sheets were resumed and the files already there taken. */
export async function startWatchService(options: WatchServiceOptions): Promise<WatchService> {
  const { intake, close } = await openSheetIntake(options);
  const watcher = startFolderWatcher({
    intake,
    ...(options.stableMs !== undefined ? { stableMs: options.stableMs } : {}),
    ...(options.rescanMs !== undefined ? { rescanMs: options.rescanMs } : {}),
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.onOutcome ? { onOutcome: options.onOutcome } : {}),
  });
  try {
    await watcher.ready;
  } catch (err) {
    await watcher.stop();
    await close();
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    folder: watcher.folder,
    intake,
    stop: () => {
      stopping ??= (async () => {
        intake.stop();
        await watcher.stop();
        await close();
      })();
      return stopping;
    },
  };
}
