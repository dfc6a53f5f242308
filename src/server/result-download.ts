/**
 * `GET /batches/:id/result.csv|.xlsx`: streams the batch's result file. Where the file comes from is
 * injected (`ResultFileSource`), so this server does not depend on how result files are written.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import path from "node:path";
import { pipeline } from "node:stream/promises";

export type ResultFormat = "csv" | "xlsx";

/** Where a batch's current result file is, in this format; undefined when there is none (404). */
export type ResultFileSource = (
  batchId: string,
  format: ResultFormat,
) => Promise<{ path: string } | undefined>;

const CONTENT_TYPES: Record<ResultFormat, string> = {
  csv: "text/csv; charset=utf-8",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
};

/** A file name safe inside a quoted header value (ASCII letters, digits, `.`, `-`, `_`). */
function headerFileName(filePath: string, fallback: string): string {
  const cleaned = path.basename(filePath).replace(/[^A-Za-z0-9._-]/g, "_");
  return cleaned.length > 0 ? cleaned : fallback;
}

/** Answers the download; returns false when there is no file (the caller answers 404). */
export async function sendResultFile(
  res: ServerResponse,
  source: ResultFileSource,
  batchId: string,
  format: ResultFormat,
): Promise<boolean> {
  const found = await source(batchId, format);
  if (!found) return false;
  let size: number;
  try {
    const info = await stat(found.path);
    if (!info.isFile()) return false;
    size = info.size;
  } catch {
    return false;
  }
  res.writeHead(200, {
    "content-type": CONTENT_TYPES[format],
    "content-length": size,
    "content-disposition": `attachment; filename="${headerFileName(found.path, `${batchId}-result.${format}`)}"`,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  await pipeline(createReadStream(found.path), res);
  return true;
}
