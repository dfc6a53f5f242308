/** The summary of one scheduled run (pure): what was submitted, what was refused, money per currency. */
import { formatMinor } from "../money/index.js";
import type { SheetIntakeOutcome } from "../watch/index.js";

export interface RunSummary {
  startedAt: string;
  finishedAt: string;
  /** Sheets accepted into a batch by this run. */
  batches: { file: string; batchId: string; rows: number; resumed: boolean }[];
  /** Valid rows submitted, over all batches. */
  rows: number;
  /** Money submitted per currency: minor units, and major units as text (`1250.00`). */
  totals: Record<string, { rows: number; amountMinor: number; amount: string }>;
  rejected: { file: string; reason: string; rejectedAs: string; note: string; duplicateOf?: string }[];
  /** Sheets that stayed in processing/ after a transient failure (retried automatically). */
  deferred: { file: string; reason: string }[];
}

export function summarizeRun(
  outcomes: readonly SheetIntakeOutcome[],
  startedAt: Date,
  finishedAt: Date,
): RunSummary {
  const summary: RunSummary = {
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    batches: [],
    rows: 0,
    totals: {},
    rejected: [],
    deferred: [],
  };
  for (const o of outcomes) {
    switch (o.kind) {
      case "accepted": {
        summary.batches.push({ file: o.file, batchId: o.batchId, rows: o.rows, resumed: o.resumed });
        summary.rows += o.rows;
        for (const [currency, t] of Object.entries(o.totals)) {
          summary.totals[currency] ??= { rows: 0, amountMinor: 0, amount: "" };
          const total = summary.totals[currency];
          total.rows += t.rows;
          total.amountMinor += t.amount;
        }
        break;
      }
      case "rejected":
        summary.rejected.push({
          file: o.file,
          reason: o.reason,
          rejectedAs: o.rejectedAs,
          note: o.notePath,
          ...(o.duplicateOf ? { duplicateOf: o.duplicateOf } : {}),
        });
        break;
      case "deferred":
        summary.deferred.push({ file: o.file, reason: o.reason });
        break;
      default:
        break;
    }
  }
  for (const [currency, total] of Object.entries(summary.totals)) {
    total.amount = formatOrRaw(total.amountMinor, currency);
  }
  return summary;
}

/** `run-2026-11-22T03-00-00-123Z.json`: sortable, unique per millisecond, no `:` (Windows shares). */
export function runSummaryFileName(startedAt: Date): string {
  return `run-${startedAt.toISOString().replace(/[:.]/g, "-")}.json`;
}

function formatOrRaw(minor: number, currency: string): string {
  try {
    return formatMinor(minor, currency);
  } catch {
    return String(minor);
  }
}
