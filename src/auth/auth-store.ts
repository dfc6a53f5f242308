/**
 * Users, API tokens and console sessions, kept in Redis beside the pipeline's working state.
 *
 *   <p>:auth:users                 set    user names
 *   <p>:auth:user:<name>           hash   name, role, passwordHash, disabled ("1"), createdAt
 *   <p>:auth:tokens                hash   token name → sha256 of the token
 *   <p>:auth:token:<sha256>        hash   name, role, createdAt, createdBy
 *   <p>:auth:session:<sha256>      hash   user, createdAt (expires: SESSION_TTL_SECONDS, renewed on use)
 *
 * Tokens and session ids are 256-bit random values; only their sha256 is stored, so a copy of Redis
 * cannot be replayed as a login. Passwords are scrypt hashes (passwords.ts).
 */
import { createHash, randomBytes } from "node:crypto";
import { PayoutsError } from "../errors/index.js";
import type { RedisClient } from "../redis/index.js";
import { hashPassword, passwordProblem, verifyPassword } from "./passwords.js";
import { isRole, type Role } from "./roles.js";

export const DEFAULT_AUTH_PREFIX = "payouts";
/** A console session ends after this long without a request. */
export const SESSION_TTL_SECONDS = 8 * 3600;
/** Prefix of every bearer token, so a leaked one is recognisable (e.g. by secret scanners). */
export const TOKEN_PREFIX = "pyt_";

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/** Who is making a request: a console user (session) or an API token. */
export interface Principal {
  kind: "user" | "token";
  /** The user's or the token's name (the audit trail's "who"). */
  name: string;
  role: Role;
}

export interface UserInfo {
  name: string;
  role: Role;
  disabled: boolean;
  createdAt: string;
}

export interface TokenInfo {
  name: string;
  role: Role;
  createdAt: string;
  createdBy: string;
}

/** A refused user or token change; `code` is stable (for the CLI and the API). */
export class AuthError extends PayoutsError {
  override readonly name = "AuthError";
  constructor(
    override readonly code: "INVALID_NAME" | "INVALID_ROLE" | "WEAK_PASSWORD" | "EXISTS" | "NOT_FOUND",
    message: string,
  ) {
    super(code, message, {
      kind: code === "EXISTS" ? "conflict" : code === "NOT_FOUND" ? "not-found" : "usage",
    });
  }
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function checkName(kind: string, name: string): void {
  if (!NAME_PATTERN.test(name)) {
    throw new AuthError(
      "INVALID_NAME",
      `${kind} name "${name}" is not valid: use 1-64 letters, digits, ".", "_", "@" or "-", starting with a letter or digit`,
    );
  }
}

function checkRole(role: string): asserts role is Role {
  if (!isRole(role)) {
    throw new AuthError("INVALID_ROLE", `role "${role}" is not one of viewer, submitter, approver, admin`);
  }
}

export class AuthStore {
  private readonly p: string;

  constructor(
    readonly redis: RedisClient,
    prefix: string = DEFAULT_AUTH_PREFIX,
  ) {
    this.p = `${prefix}:auth`;
  }

  // ---- users --------------------------------------------------------------------------------------

  async addUser(name: string, role: string, password: string): Promise<UserInfo> {
    checkName("user", name);
    checkRole(role);
    const weak = passwordProblem(password);
    if (weak) throw new AuthError("WEAK_PASSWORD", weak);
    const createdAt = new Date().toISOString();
    const passwordHash = await hashPassword(password);
    const added = await this.redis.sadd(`${this.p}:users`, name);
    if (added === 0) throw new AuthError("EXISTS", `user "${name}" exists already`);
    await this.redis.hset(`${this.p}:user:${name}`, { name, role, passwordHash, disabled: "0", createdAt });
    return { name, role, disabled: false, createdAt };
  }

  /**
   * Gives an existing user a new password (and role), enabled again; adds the user when missing.
   * For set-ups like the demo that must hand out a login that works whatever Redis held before.
   */
  async setUser(name: string, role: string, password: string): Promise<UserInfo> {
    checkName("user", name);
    checkRole(role);
    const weak = passwordProblem(password);
    if (weak) throw new AuthError("WEAK_PASSWORD", weak);
    const passwordHash = await hashPassword(password);
    const createdAt = new Date().toISOString();
    await this.redis.sadd(`${this.p}:users`, name);
    await this.redis.hsetnx(`${this.p}:user:${name}`, "createdAt", createdAt);
    await this.redis.hset(`${this.p}:user:${name}`, { name, role, passwordHash, disabled: "0" });
    return (await this.getUser(name)) ?? { name, role, disabled: false, createdAt };
  }

  async getUser(name: string): Promise<UserInfo | undefined> {
    if (!NAME_PATTERN.test(name)) return undefined;
    const h = await this.redis.hgetall(`${this.p}:user:${name}`);
    if (!h.name || !isRole(h.role)) return undefined;
    return { name: h.name, role: h.role, disabled: h.disabled === "1", createdAt: h.createdAt ?? "" };
  }

  async listUsers(): Promise<UserInfo[]> {
    const names = (await this.redis.smembers(`${this.p}:users`)).sort();
    const users = await Promise.all(names.map((n) => this.getUser(n)));
    return users.filter((u): u is UserInfo => u !== undefined);
  }

  /** Disables a user and ends their sessions at once (the next request of an open page gets 401). */
  async disableUser(name: string): Promise<void> {
    if (!(await this.getUser(name))) throw new AuthError("NOT_FOUND", `no user "${name}"`);
    await this.redis.hset(`${this.p}:user:${name}`, "disabled", "1");
  }

  /** The user when name and password match an enabled user; undefined otherwise (same answer for all). */
  async checkLogin(name: string, password: string): Promise<UserInfo | undefined> {
    const stored = NAME_PATTERN.test(name)
      ? await this.redis.hget(`${this.p}:user:${name}`, "passwordHash")
      : null;
    // Unknown users still pay for one scrypt, so timing does not tell which names exist.
    const ok = await verifyPassword(password, stored ?? (await dummyHash()));
    if (!ok || !stored) return undefined;
    const user = await this.getUser(name);
    return user && !user.disabled ? user : undefined;
  }

  // ---- tokens -------------------------------------------------------------------------------------

  /** Creates a token and returns its secret value: shown once, only its hash is kept. */
  async createToken(
    name: string,
    role: string,
    createdBy: string,
  ): Promise<{ token: string; info: TokenInfo }> {
    checkName("token", name);
    checkRole(role);
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
    const hash = sha256(token);
    const set = await this.redis.hsetnx(`${this.p}:tokens`, name, hash);
    if (set === 0) throw new AuthError("EXISTS", `token "${name}" exists already (revoke it first)`);
    const info: TokenInfo = { name, role, createdAt: new Date().toISOString(), createdBy };
    await this.redis.hset(`${this.p}:token:${hash}`, { ...info });
    return { token, info };
  }

  async listTokens(): Promise<TokenInfo[]> {
    const byName = await this.redis.hgetall(`${this.p}:tokens`);
    const infos = await Promise.all(
      Object.entries(byName).map(async ([name, hash]) => {
        const h = await this.redis.hgetall(`${this.p}:token:${hash}`);
        return isRole(h.role)
          ? { name, role: h.role, createdAt: h.createdAt ?? "", createdBy: h.createdBy ?? "" }
          : undefined;
      }),
    );
    return infos.filter((t): t is TokenInfo => t !== undefined).sort((a, b) => a.name.localeCompare(b.name));
  }

  async revokeToken(name: string): Promise<void> {
    const hash = await this.redis.hget(`${this.p}:tokens`, name);
    if (!hash) throw new AuthError("NOT_FOUND", `no token "${name}"`);
    await this.redis.multi().del(`${this.p}:token:${hash}`).hdel(`${this.p}:tokens`, name).exec();
  }

  /** The token's principal, or undefined for an unknown or revoked token. */
  async principalForToken(token: string): Promise<Principal | undefined> {
    if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return undefined;
    const h = await this.redis.hgetall(`${this.p}:token:${sha256(token)}`);
    return h.name && isRole(h.role) ? { kind: "token", name: h.name, role: h.role } : undefined;
  }

  // ---- sessions -----------------------------------------------------------------------------------

  /** Opens a session for a user; returns the cookie value. */
  async createSession(user: string): Promise<string> {
    const id = randomBytes(32).toString("base64url");
    const key = `${this.p}:session:${sha256(id)}`;
    await this.redis
      .multi()
      .hset(key, { user, createdAt: new Date().toISOString() })
      .expire(key, SESSION_TTL_SECONDS)
      .exec();
    return id;
  }

  /**
   * The session's principal with the user's current role, renewing its expiry; undefined when the
   * session is unknown, expired, or its user was disabled or removed.
   */
  async principalForSession(sessionId: string): Promise<Principal | undefined> {
    if (sessionId.length === 0 || sessionId.length > 200) return undefined;
    const key = `${this.p}:session:${sha256(sessionId)}`;
    const name = await this.redis.hget(key, "user");
    if (!name) return undefined;
    const user = await this.getUser(name);
    if (!user || user.disabled) {
      await this.redis.del(key);
      return undefined;
    }
    await this.redis.expire(key, SESSION_TTL_SECONDS);
    return { kind: "user", name: user.name, role: user.role };
  }

  async endSession(sessionId: string): Promise<void> {
    await this.redis.del(`${this.p}:session:${sha256(sessionId)}`);
  }
}

/** A valid hash of a random password, compared against when the user does not exist (made once, lazily). */
let dummy: Promise<string> | undefined;
function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString("hex"));
  return dummy;
}
