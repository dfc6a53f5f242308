/**
 * Public face of the audit trail. Record every action a person or a program takes through the server
 * or the CLI:
 *
 *   await audit.record({ actor: { kind: "user", name, role }, action: "batch.approve",
 *                        target: batchId, from: request.ip, outcome: "ok" });
 *
 * In a Fastify route, `auditRequest(audit, request, action, target, outcome, detail)` fills actor and
 * from out of the request.
 */

export { AUDIT_CSV_COLUMNS, AUDIT_CSV_HEADER, auditCsvLine } from "./audit-csv.js";
export { actorOf, auditRequest } from "./audit-request.js";
export {
  AUDIT_CURSOR_PATTERN,
  type AuditActor,
  type AuditEntry,
  type AuditFilter,
  type AuditInput,
  type AuditOutcome,
  AuditTrail,
  DEFAULT_AUDIT_MAX_ENTRIES,
  DEFAULT_AUDIT_SCAN_BUDGET,
  matchesAuditFilter,
} from "./audit-trail.js";
