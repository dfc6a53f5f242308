/**
 * The intake benchmark's figures and how they are printed: one table row per (size, format), the
 * targets beside them, and how peak memory moves as the row count grows. Pure formatting:
 * no verdict here changes the exit code (this is a benchmark, not a test).
 */

export type BenchFormat = "csv" | "xlsx";

/** What one child process measured for one sheet. */
export interface IntakeMeasurement {
  format: BenchFormat;
  rows: number;
  file: string;
  fileBytes: number;
  /** Rows the validator handed out, and how many were valid. */
  rowsRead: number;
  validRows: number;
  /** Problem codes of invalid rows with their counts, and a few first problems, for the warning. */
  problemCounts: Record<string, number>;
  firstProblems: string[];
  /** `validateSheet` resolving: open, header, live data, the XLSX pre-scan. */
  openMs: number;
  /** Open plus full iteration. */
  totalMs: number;
  /** User + system CPU time of the child over the same span (all its threads: zlib and GC run off-thread). */
  cpuMs: number;
  rssStartBytes: number;
  rssSampledPeakBytes: number;
  maxRssBytes: number;
  heapUsedAfterBytes: number;
}

export const INTAKE_TARGETS = {
  csvRowsPerSecond: 100_000,
  xlsxRowsPerSecond: 25_000,
  peakRssBytesAt100k: 300 * 1024 * 1024,
  /**
   * "Flat" as printed here: peak RSS grows by less than 1 MB per 10,000 more rows (100 bytes a row),
   * i.e. the sheet is streamed rather than held. Our own rule of thumb; the issue only says "flat".
   */
  flatBytesPerRow: 100,
} as const;

export function rowsPerSecond(m: IntakeMeasurement): number {
  return m.rowsRead / (m.totalMs / 1000);
}

function targetRate(format: BenchFormat): number {
  return format === "csv" ? INTAKE_TARGETS.csvRowsPerSecond : INTAKE_TARGETS.xlsxRowsPerSecond;
}

const mb = (bytes: number) => (bytes / 1048576).toFixed(0);
const int = (n: number) => Math.round(n).toLocaleString("en-US");

export function formatIntakeTable(results: readonly IntakeMeasurement[]): string {
  const header = [
    "rows",
    "format",
    "valid",
    "file MB",
    "open s",
    "total s",
    "rows/s",
    "target rows/s",
    "CPU s",
    "rows/CPU-s",
    "RSS start MB",
    "peak RSS MB (50ms)",
    "maxRSS MB",
    "target RSS",
  ];
  const body = results.map((m) => {
    const rate = rowsPerSecond(m);
    const target = targetRate(m.format);
    const peak = Math.max(m.rssSampledPeakBytes, m.maxRssBytes);
    const rssTarget =
      m.rows >= 100_000
        ? `< 300 MB ${peak < INTAKE_TARGETS.peakRssBytesAt100k ? "met" : "MISSED"}`
        : "(at 100k)";
    return [
      int(m.rows),
      m.format,
      m.validRows === m.rows ? int(m.validRows) : `${int(m.validRows)} !!`,
      (m.fileBytes / 1048576).toFixed(1),
      (m.openMs / 1000).toFixed(2),
      (m.totalMs / 1000).toFixed(2),
      int(rate),
      `>= ${int(target)} ${rate >= target ? "met" : "MISSED"}`,
      (m.cpuMs / 1000).toFixed(2),
      int(m.rowsRead / (m.cpuMs / 1000)),
      mb(m.rssStartBytes),
      mb(m.rssSampledPeakBytes),
      mb(m.maxRssBytes),
      rssTarget,
    ];
  });
  return alignColumns([header, ...body]);
}

/** Per format: peak RSS at the smallest and largest size, and the growth per extra row. */
export function formatFlatness(results: readonly IntakeMeasurement[]): string[] {
  const lines: string[] = [];
  for (const format of ["csv", "xlsx"] as const) {
    const runs = results.filter((m) => m.format === format).sort((a, b) => a.rows - b.rows);
    const first = runs[0];
    const last = runs[runs.length - 1];
    if (!first || !last || first === last) continue;
    const peakOf = (m: IntakeMeasurement) => Math.max(m.rssSampledPeakBytes, m.maxRssBytes);
    const growth = peakOf(last) - peakOf(first);
    const perRow = growth / (last.rows - first.rows);
    const verdict = perRow < INTAKE_TARGETS.flatBytesPerRow ? "flat" : "GROWS";
    const series = runs.map((m) => `${int(m.rows)}: ${mb(peakOf(m))} MB`).join(", ");
    lines.push(
      `${format.padEnd(4)} peak RSS by size: ${series}; ${growth >= 0 ? "+" : ""}${mb(growth)} MB from ${int(first.rows)} to ${int(last.rows)} rows = ${perRow.toFixed(0)} bytes/row (target: flat, < ${INTAKE_TARGETS.flatBytesPerRow} bytes/row) ${verdict}`,
    );
  }
  return lines;
}

/** Columns of numbers are right-aligned so digits line up; the format and target columns read left to right. */
function alignColumns(table: string[][]): string {
  const widths: number[] = [];
  for (const row of table) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  const leftAligned = (i: number) => i === 1 || i === 7 || i === 13;
  return table
    .map((row) =>
      row
        .map((cell, i) => (leftAligned(i) ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
