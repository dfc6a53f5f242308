/**
 * Watches one folder (inbox/) and hands every complete sheet to the intake, one at a time.
 *
 * chokidar reports new and growing files quickly; a periodic rescan of the folder is the safety net
 * for events a file system (network shares) never delivers, and it also resumes sheets abandoned in
 * processing/. On start, abandoned sheets are resumed first, then everything already in the folder
 * (files that arrived while the service was down) is taken.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { type FSWatcher, watch } from "chokidar";
import { classifyFileName } from "./file-rules.js";
import type { IntakeLogger, SheetIntake, SheetIntakeOutcome } from "./sheet-intake.js";
import { DEFAULT_STABLE_MS, waitUntilStable } from "./stability.js";

/** Default time between two rescans of the folder. */
export const DEFAULT_RESCAN_MS = 10_000;

export interface FolderWatcherOptions {
  intake: SheetIntake;
  /** The folder to watch (default: the intake's inbox/). */
  folder?: string;
  /** Time between the two size checks that decide a file is complete. Default 1000 ms. */
  stableMs?: number;
  /** Time between rescans. Default 10 000 ms. */
  rescanMs?: number;
  logger?: IntakeLogger;
  /** Called with every outcome other than `ignored` (tests, metrics). */
  onOutcome?: (outcome: SheetIntakeOutcome) => void;
}

export interface FolderWatcher {
  folder: string;
  /** Resolves once the start-up work (abandoned sheets, files already present) is done. */
  ready: Promise<void>;
  /** Stops watching, waits for the sheet in hand to finish. Idempotent. */
  stop(): Promise<void>;
}

export function startFolderWatcher(options: FolderWatcherOptions): FolderWatcher {
  const { intake } = options;
  const folder = path.resolve(options.folder ?? intake.folders.inbox);
  const stableMs = options.stableMs ?? DEFAULT_STABLE_MS;
  const log = options.logger;
  const abort = new AbortController();
  /** Names waiting or in hand: a name is handled by one loop at a time. */
  const pending = new Set<string>();
  const queue: string[] = [];
  let draining: Promise<void> | undefined;
  let stopped = false;

  const report = (outcome: SheetIntakeOutcome) => {
    if (outcome.kind !== "ignored") options.onOutcome?.(outcome);
  };

  const consider = (name: string) => {
    if (stopped || pending.has(name)) return;
    if (classifyFileName(name).kind === "ignore") return;
    pending.add(name);
    queue.push(name);
    kick();
  };

  const kick = () => {
    if (draining || stopped) return;
    draining = drain().finally(() => {
      draining = undefined;
      // A name queued while the loop was finishing.
      if (queue.length > 0) kick();
    });
  };

  async function drain(): Promise<void> {
    while (queue.length > 0 && !stopped) {
      const name = queue.shift()!;
      try {
        const stability = await waitUntilStable(path.join(folder, name), stableMs, abort.signal);
        if (stability === "stable") report(await intake.take(folder, name));
      } catch (err) {
        log?.error(
          { file: name, err: err instanceof Error ? err.message : String(err) },
          "watched file not handled",
        );
      } finally {
        pending.delete(name);
      }
    }
  }

  let scanning: Promise<void> | undefined;
  function rescan(): Promise<void> {
    if (stopped) return Promise.resolve();
    scanning ??= scanOnce().finally(() => {
      scanning = undefined;
    });
    return scanning;
  }

  async function scanOnce(): Promise<void> {
    try {
      for (const outcome of await intake.resumeAbandoned()) report(outcome);
    } catch (err) {
      log?.error({ err: err instanceof Error ? err.message : String(err) }, "resuming processing/ failed");
    }
    try {
      for (const name of (await readdir(folder)).sort()) consider(name);
    } catch (err) {
      log?.error({ folder, err: err instanceof Error ? err.message : String(err) }, "rescan failed");
    }
  }

  let fsWatcher: FSWatcher | undefined;
  const ready = (async () => {
    // Events first, so nothing dropped during the start-up scan is missed; the queue dedups names.
    fsWatcher = watch(folder, { depth: 0, ignoreInitial: true, followSymlinks: false, persistent: true });
    const onFile = (file: string) => {
      if (path.dirname(path.resolve(file)) === folder) consider(path.basename(file));
    };
    fsWatcher.on("add", onFile).on("change", onFile);
    fsWatcher.on("error", (err) =>
      log?.warn({ folder, err: err instanceof Error ? err.message : String(err) }, "watch error"),
    );
    await rescan();
    log?.info({ folder, stableMs }, "watching folder");
  })();
  const timer = setInterval(() => void rescan(), options.rescanMs ?? DEFAULT_RESCAN_MS);
  timer.unref();

  let stopping: Promise<void> | undefined;
  return {
    folder,
    ready,
    stop: () => {
      stopping ??= (async () => {
        stopped = true;
        clearInterval(timer);
        abort.abort();
        await ready.catch(() => undefined);
        await fsWatcher?.close();
        await scanning;
        await draining;
      })();
      return stopping;
    },
  };
}
