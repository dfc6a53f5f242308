/**
 * Reading a sheet where a hostile file cannot hurt the process: in a `worker_threads` Worker with a
 * bounded heap (`readMaxMemoryMb`) and a time limit (`readTimeoutMs`), terminated when either is
 * passed or when the caller aborts (shutdown). The watched folder and the nightly run read every
 * sheet this way before submitting it, so a file that gets past the readers' own limits costs one
 * thread and is refused, while payments and reconciliation in the same process go on.
 */
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { PayoutsError } from "../errors/index.js";
import type { IsolatedReadAnswer, IsolatedReadRequest } from "./isolated-read-thread.js";
import { limitExceeded, type SheetLimits, sheetLimits } from "./limits.js";
import { SheetReadError } from "./types.js";

export interface IsolatedReadOptions {
  /** XLSX: the worksheet to read. */
  sheet?: string;
  limits?: Partial<SheetLimits>;
  /** Aborting terminates the thread at once; the read then rejects with `SheetReadAborted`. */
  signal?: AbortSignal;
}

/** The read was stopped from outside (shutdown): nothing is known about the file. */
export class SheetReadAborted extends PayoutsError {
  override readonly name = "SheetReadAborted";
  constructor(message: string) {
    super("SHEET_READ_ABORTED", message, { kind: "unavailable" });
  }
}

/** Time the thread gets beyond the reader's own deadline before it is terminated (a stuck step). */
const TERMINATE_AFTER_DEADLINE_MS = 5_000;

/**
 * The thread's script. Built code runs `isolated-read-thread.js` beside this file; under a test
 * runner that loads the TypeScript sources the built copy in `dist/` is used (`npm test` builds first).
 */
function threadScript(): URL {
  const beside = new URL("./isolated-read-thread.js", import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  const built = fileURLToPath(import.meta.url).replace(
    /([\\/])src([\\/])sheets([\\/])isolated-read\.ts$/,
    "$1dist$1src$1sheets$1isolated-read-thread.js",
  );
  return pathToFileURL(built);
}

/**
 * Reads the sheet to its last row in a thread, within the limits. Resolves with the rows read; throws
 * SheetReadError for a file that cannot or must not be read (its limits included: LIMIT_EXCEEDED for
 * memory or time), SheetReadAborted when aborted, and a plain Error for anything not the file's fault.
 */
export function readSheetIsolated(path: string, options: IsolatedReadOptions = {}): Promise<number> {
  const limits = sheetLimits(options.limits);
  const request: IsolatedReadRequest = {
    path,
    limits,
    ...(options.sheet === undefined ? {} : { sheet: options.sheet }),
  };
  const fileName = path.split(/[\\/]/).pop() ?? path;
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(new SheetReadAborted("stopped before the sheet was read"));
      return;
    }
    const worker = new Worker(threadScript(), {
      workerData: request,
      resourceLimits: { maxOldGenerationSizeMb: limits.readMaxMemoryMb },
    });
    let outcome: { ok: true; rows: number } | { ok: false; error: Error } | undefined;
    const settle = (value: typeof outcome) => {
      outcome ??= value;
      void worker.terminate();
    };
    const timer = setTimeout(
      () =>
        settle({ ok: false, error: limitExceeded("readTimeoutMs", `${fileName}: reading it took`, limits) }),
      limits.readTimeoutMs + TERMINATE_AFTER_DEADLINE_MS,
    );
    const onAbort = () =>
      settle({ ok: false, error: new SheetReadAborted("stopped while the sheet was read") });
    options.signal?.addEventListener("abort", onAbort, { once: true });
    worker.on("message", (answer: IsolatedReadAnswer) => {
      if (answer.kind === "read") settle({ ok: true, rows: answer.rows });
      else if (answer.kind === "refused")
        settle({ ok: false, error: new SheetReadError(answer.code, answer.message) });
      else settle({ ok: false, error: new Error(answer.message) });
    });
    worker.on("error", (error: Error & { code?: string }) => {
      settle({
        ok: false,
        error:
          error.code === "ERR_WORKER_OUT_OF_MEMORY"
            ? limitExceeded("readMaxMemoryMb", `${fileName}: reading it needed`, limits)
            : new Error(`reading ${fileName} failed: ${error.message}`),
      });
    });
    worker.on("exit", () => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      const result = outcome ?? {
        ok: false,
        error: new Error(`reading ${fileName} stopped without an answer`),
      };
      if (result.ok) resolve(result.rows);
      else reject(result.error);
    });
  });
}
