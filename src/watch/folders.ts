/**
 * The folders under DATA_DIR that hands-off operation uses. Every move between them is a `rename`
 * inside one file system, so a file is always in exactly one of them (never lost, never copied half).
 *
 *   inbox/       sheets dropped by people; the watcher takes them
 *   scheduled/   sheets staged for the nightly run
 *   processing/  a sheet being submitted (its rename into here is the lock)
 *   archive/     accepted sheets (and the batches' own archive files)
 *   rejected/    refused sheets, each with a note or validation report beside it
 *   outbox/      result files and run summaries
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";

export interface DataFolders {
  inbox: string;
  scheduled: string;
  processing: string;
  archive: string;
  rejected: string;
  outbox: string;
}

export function dataFolders(dataDir: string): DataFolders {
  const root = path.resolve(dataDir);
  return {
    inbox: path.join(root, "inbox"),
    scheduled: path.join(root, "scheduled"),
    processing: path.join(root, "processing"),
    archive: path.join(root, "archive"),
    rejected: path.join(root, "rejected"),
    outbox: path.join(root, "outbox"),
  };
}

export async function ensureFolders(folders: DataFolders): Promise<void> {
  for (const dir of Object.values(folders)) await mkdir(dir, { recursive: true });
}
