/** The audit trail as CSV (pure): one header line, one line per entry; cells made spreadsheet-safe. */
import { CRLF, csvRecord, UTF8_BOM } from "../files/index.js";
import type { AuditEntry } from "./audit-trail.js";

export const AUDIT_CSV_COLUMNS = [
  "id",
  "at",
  "actor_kind",
  "actor",
  "role",
  "action",
  "target",
  "from",
  "outcome",
  "detail",
] as const;

/** The first line (with the byte-order mark Excel needs to read UTF-8). */
export const AUDIT_CSV_HEADER = `${UTF8_BOM}${AUDIT_CSV_COLUMNS.join(",")}${CRLF}`;

export function auditCsvLine(e: AuditEntry): string {
  return csvRecord([
    e.id,
    e.at,
    e.actor?.kind ?? "",
    e.actor?.name ?? "",
    e.actor?.role ?? "",
    e.action,
    e.target ?? "",
    e.from,
    e.outcome,
    e.detail ? JSON.stringify(e.detail) : "",
  ]);
}
