/** Audit entries from a Fastify request: the principal is the actor, the client IP is "from". */
import type { FastifyRequest } from "fastify";
import type { AuditActor, AuditOutcome, AuditTrail } from "./audit-trail.js";

export function actorOf(request: FastifyRequest): AuditActor {
  const p = request.principal;
  return p ? { kind: p.kind, name: p.name, role: p.role } : { kind: "anonymous", name: "-" };
}

/** Records one action; a failure to write the trail is logged, never turned into a failed request. */
export async function auditRequest(
  audit: AuditTrail,
  request: FastifyRequest,
  action: string,
  target: string | undefined,
  outcome: AuditOutcome,
  detail?: Record<string, unknown>,
): Promise<void> {
  try {
    await audit.record({ actor: actorOf(request), action, target, from: request.ip, outcome, detail });
  } catch (err) {
    request.log.error({ err, action }, "could not write the audit trail");
  }
}
