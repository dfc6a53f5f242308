/**
 * Public face of authentication and authorisation: users, roles, API tokens and console sessions
 * (kept in Redis), and the role check every HTTP route goes through.
 *
 *   roles:        viewer, submitter, approver, admin (roles.ts says which permission each has)
 *   in a route:   app.post("/api/v1/batches/:id/approve", { preHandler: allow("batches.approve") }, …)
 *                 → 401 UNAUTHENTICATED / 403 FORBIDDEN / 403 CSRF_INVALID, else the handler runs with
 *                 `principalOf(request)` = { kind: "user" | "token", name, role }
 *   elsewhere:    can(role, "batches.approve")
 */
export {
  AuthError,
  AuthStore,
  DEFAULT_AUTH_PREFIX,
  type Principal,
  SESSION_TTL_SECONDS,
  TOKEN_PREFIX,
  type TokenInfo,
  type UserInfo,
} from "./auth-store.js";
export { type AuthOptions, allow, principalOf, registerAuth, SESSION_COOKIE } from "./fastify-auth.js";
export { MIN_PASSWORD_LENGTH, passwordProblem } from "./passwords.js";
export { can, isRole, PERMISSIONS, type Permission, permissionsOf, ROLES, type Role } from "./roles.js";
