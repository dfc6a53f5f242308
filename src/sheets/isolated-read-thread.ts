/**
 * The thread behind `readSheetIsolated` (`./isolated-read.ts`): reads one sheet to its last row with
 * the limits it is given and reports how that went. Runs in a `worker_threads` Worker with a bounded
 * heap, so a file that gets past every limit can only exhaust this thread.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { SheetLimits } from "./limits.js";
import { openSheet } from "./open-sheet.js";
import { SheetReadError } from "./types.js";

/** What the thread is given. */
export interface IsolatedReadRequest {
  path: string;
  sheet?: string;
  limits: SheetLimits;
}

/** What the thread answers: the rows read, the file's fault, or another failure (disk, permissions). */
export type IsolatedReadAnswer =
  | { kind: "read"; rows: number }
  | { kind: "refused"; code: SheetReadError["code"]; message: string }
  | { kind: "failed"; message: string };

async function readAll(request: IsolatedReadRequest): Promise<IsolatedReadAnswer> {
  try {
    const opened = await openSheet(request.path, {
      limits: request.limits,
      ...(request.sheet === undefined ? {} : { sheet: request.sheet }),
    });
    let rows = 0;
    for await (const _ of opened.rows) rows++;
    return { kind: "read", rows };
  } catch (error) {
    if (error instanceof SheetReadError) return { kind: "refused", code: error.code, message: error.message };
    return { kind: "failed", message: error instanceof Error ? error.message : String(error) };
  }
}

parentPort?.postMessage(await readAll(workerData as IsolatedReadRequest));
