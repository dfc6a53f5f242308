/**
 * Watches one folder (inbox/) and hands every complete sheet to the intake, several at a time.
 *
 * Names seen (chokidar's events, the start-up scan, periodic rescans) wait in one set. One pass looks
 * at all of them together (./stability.ts): a file untouched for the quiet period is taken at once,
 * the others are looked at again when the first of them could be complete. Complete files are taken
 * with bounded concurrency, so 10,000 sheets dropped at once cost one quiet period and then proceed as
 * fast as the intake allows, never one sheet and one wait at a time.
 *
 * The folder's own change events (`fs.watch`: inotify on Linux) name the files that appeared or grew;
 * nothing is listed or looked at per event, so taking (renaming out) 10,000 files costs 10,000 small
 * events, not 10,000 listings of the folder (a watcher that re-reads the folder on every change, as
 * chokidar does for a directory, spends most of its time in lstat). The periodic rescan is the safety
 * net for events a file system (network shares) never delivers, and it also resumes sheets abandoned
 * in processing/.
 * On start, abandoned sheets are resumed first, then everything already in the folder (files that
 * arrived while the service was down) is taken.
 */
import { type FSWatcher, watch } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import pLimit from "p-limit";
import type { LogSink } from "../logging/index.js";
import { classifyFileName } from "./file-rules.js";
import type { SheetIntake, SheetIntakeOutcome } from "./sheet-intake.js";
import { DEFAULT_STABLE_MS, lookAtFiles } from "./stability.js";

/** Default time between two rescans of the folder. */
export const DEFAULT_RESCAN_MS = 10_000;

/** Default number of sheets taken (read, validated, submitted) at once. Setting: WATCH_CONCURRENCY. */
export const DEFAULT_WATCH_CONCURRENCY = 4;

/** The shortest wait between two passes over the waiting files (events come in bursts). */
const MIN_PASS_GAP_MS = 50;

export interface FolderWatcherOptions {
  intake: SheetIntake;
  /** The folder to watch (default: the intake's inbox/). */
  folder?: string;
  /** The quiet period: a file untouched this long is complete. Default {@link DEFAULT_STABLE_MS}. */
  stableMs?: number;
  /** Time between rescans. Default {@link DEFAULT_RESCAN_MS}. */
  rescanMs?: number;
  /** Sheets taken at once. Default {@link DEFAULT_WATCH_CONCURRENCY}. */
  concurrency?: number;
  logger?: LogSink;
  /** Called with every outcome other than `ignored` (tests, metrics). */
  onOutcome?: (outcome: SheetIntakeOutcome) => void;
}

export interface FolderWatcher {
  folder: string;
  /** Resolves once the start-up work (abandoned sheets, files already present) is done. */
  ready: Promise<void>;
  /** Stops watching, waits for the sheets in hand to finish. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Watches one folder. Kept as one closure on purpose: the folder's change events, the rescans, the
 * stability pass and the sheets in hand share one queue and one stop, which must agree on what is
 * being taken so that no file is taken twice.
 */
export function startFolderWatcher(options: FolderWatcherOptions): FolderWatcher {
  const { intake } = options;
  const folder = path.resolve(options.folder ?? intake.folders.inbox);
  const stableMs = options.stableMs ?? DEFAULT_STABLE_MS;
  const log = options.logger;
  const takeLimit = pLimit(options.concurrency ?? DEFAULT_WATCH_CONCURRENCY);
  /** Names waiting to be complete. */
  const waiting = new Set<string>();
  /** Names being taken: a name is handled once at a time. */
  const inHand = new Set<string>();
  const takes = new Set<Promise<void>>();
  let passTimer: NodeJS.Timeout | undefined;
  let passAt = Number.POSITIVE_INFINITY;
  let passing: Promise<void> | undefined;
  let passAgain = false;
  let stopped = false;

  const report = (outcome: SheetIntakeOutcome) => {
    if (outcome.kind !== "ignored") options.onOutcome?.(outcome);
  };

  const consider = (name: string) => {
    if (stopped || waiting.has(name) || inHand.has(name)) return;
    if (classifyFileName(name).kind === "ignore") return;
    waiting.add(name);
    schedulePass(0);
  };

  /** A pass in `ms` (or sooner, if one is already due sooner). */
  function schedulePass(ms: number): void {
    if (stopped) return;
    const at = Date.now() + Math.max(ms, MIN_PASS_GAP_MS);
    if (passTimer && at >= passAt) return;
    if (passTimer) clearTimeout(passTimer);
    passAt = at;
    passTimer = setTimeout(() => {
      passTimer = undefined;
      passAt = Number.POSITIVE_INFINITY;
      runPass();
    }, at - Date.now());
  }

  function runPass(): void {
    if (passing) {
      passAgain = true;
      return;
    }
    passing = pass()
      .catch((err: unknown) => log?.error({ folder, err }, "watch pass failed"))
      .finally(() => {
        passing = undefined;
        if (passAgain) {
          passAgain = false;
          schedulePass(0);
        }
      });
  }

  /** One look at every waiting file: the complete ones are taken, the next look is planned. */
  async function pass(): Promise<void> {
    const names = [...waiting];
    if (names.length === 0 || stopped) return;
    const looks = await lookAtFiles(folder, names, stableMs);
    let nextMs = Number.POSITIVE_INFINITY;
    for (const [name, look] of looks) {
      if (!waiting.has(name)) continue;
      if (look.kind === "wait") {
        nextMs = Math.min(nextMs, look.ms);
        continue;
      }
      waiting.delete(name);
      if (look.kind === "stable") take(name);
    }
    if (Number.isFinite(nextMs)) schedulePass(nextMs);
  }

  function take(name: string): void {
    inHand.add(name);
    const taking = takeLimit(async () => {
      if (stopped) return;
      try {
        report(await intake.take(folder, name));
      } catch (err) {
        log?.error({ file: name, err }, "watched file not handled");
      }
    }).finally(() => {
      inHand.delete(name);
      takes.delete(taking);
    });
    takes.add(taking);
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
      log?.error({ err }, "resuming processing/ failed");
    }
    try {
      for (const name of (await readdir(folder)).sort()) consider(name);
    } catch (err) {
      log?.error({ folder, err }, "rescan failed");
    }
  }

  let fsWatcher: FSWatcher | undefined;
  const ready = (async () => {
    // Events first, so nothing dropped during the start-up scan is missed; the set dedups names. An
    // event without a name (some platforms) or for a name that is gone is settled by the next pass.
    fsWatcher = watch(folder, { persistent: true }, (_event, name) => {
      if (typeof name === "string" && name !== "") consider(name);
      else void rescan();
    });
    fsWatcher.on("error", (err) => log?.warn({ folder, err }, "watch error"));
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
        if (passTimer) clearTimeout(passTimer);
        await ready.catch(() => undefined);
        fsWatcher?.close();
        await scanning;
        await passing;
        await Promise.all([...takes]);
      })();
      return stopping;
    },
  };
}
