/** Public face of the watched folder: the shared sheet intake, the folder watcher and its service. */
export {
  archivedSheetName,
  classifyFileName,
  errorNoteName,
  type FileVerdict,
  isPlainName,
  PARTIAL_FILE_SUFFIXES,
  SHEET_EXTENSIONS,
  validationReportName,
} from "./file-rules.js";
export {
  DEFAULT_RESCAN_MS,
  DEFAULT_WATCH_CONCURRENCY,
  type FolderWatcher,
  type FolderWatcherOptions,
  startFolderWatcher,
} from "./folder-watcher.js";
export { type DataFolders, dataFolders, ensureFolders } from "./folders.js";
export {
  createSheetIntake,
  DEFAULT_LEASE_MS,
  type SheetIntake,
  type SheetIntakeOptions,
  type SheetIntakeOutcome,
} from "./sheet-intake.js";
export { DEFAULT_STABLE_MS, type Look, lookAtFiles } from "./stability.js";
export {
  type IntakeConnection,
  openSheetIntake,
  startWatchService,
  type WatchService,
  type WatchServiceOptions,
} from "./watch-service.js";
