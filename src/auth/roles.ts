/**
 * Roles and what each may do. The server checks a permission, never a role name, so a new route
 * names what it does (`batches.submit`) and this table alone decides who may.
 *
 *   viewer     reads batches, rows, results and reports
 *   submitter  viewer + uploads sheets, submits batches, retries rows, cancels scheduled payments,
 *              pauses, resumes and cancels batches
 *   approver   viewer + approves or rejects batches waiting for approval (docs/design.md §3.10), and
 *              pauses a batch (stopping is always safe; resuming sends money, so it is a submitter's)
 *   admin      everything, including the audit trail and the queue view
 */
export const ROLES = ["viewer", "submitter", "approver", "admin"] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = [
  "batches.read",
  "sheets.upload",
  "batches.submit",
  "rows.retry",
  "rows.cancel",
  "batches.pause",
  "batches.approve",
  "audit.read",
  "queues.view",
  "metrics.read",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const GRANTS: Record<Role, readonly Permission[]> = {
  viewer: ["batches.read", "metrics.read"],
  submitter: [
    "batches.read",
    "metrics.read",
    "sheets.upload",
    "batches.submit",
    "rows.retry",
    "rows.cancel",
    "batches.pause",
  ],
  approver: ["batches.read", "metrics.read", "batches.approve", "batches.pause"],
  admin: PERMISSIONS,
};

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

/** True when `role` may do `permission`. */
export function can(role: Role, permission: Permission): boolean {
  return GRANTS[role].includes(permission);
}

/** The permissions of a role (for the console, which hides what the user may not do). */
export function permissionsOf(role: Role): Permission[] {
  return [...GRANTS[role]];
}
