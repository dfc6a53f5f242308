/**
 * Users, tokens, sessions and the audit trail on a real Redis, and the `payouts user` / `payouts token`
 * commands as an operator runs them (the built binary, password on standard input).
 */

import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditTrail } from "../../../src/audit/index.js";
import { AuthStore, can, TOKEN_PREFIX } from "../../../src/auth/index.js";
import { connectRedis } from "../../../src/pipeline/index.js";
import type { RedisClient } from "../../../src/redis/index.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";

const BIN = path.resolve("bin/payouts.js");
const prefix = uniquePrefix("auth");
let redis: RedisClient;
let store: AuthStore;

beforeAll(() => {
  redis = connectRedis(REDIS_URL);
  store = new AuthStore(redis, prefix);
});
afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

function cli(args: string[], stdin = ""): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args, "--redis-prefix", prefix], {
      env: { ...process.env, REDIS_URL },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

describe("roles", () => {
  it("lets only submitters and admins move money, only approvers and admins approve", () => {
    expect(can("viewer", "batches.read")).toBe(true);
    expect(can("viewer", "batches.submit")).toBe(false);
    expect(can("submitter", "batches.submit")).toBe(true);
    expect(can("submitter", "batches.approve")).toBe(false);
    expect(can("approver", "batches.approve")).toBe(true);
    expect(can("approver", "rows.retry")).toBe(false);
    expect(can("admin", "queues.view")).toBe(true);
    expect(can("submitter", "audit.read")).toBe(false);
  });
});

describe("AuthStore", () => {
  it("logs a user in with the right password only, and never a disabled one", async () => {
    await store.addUser("clerk", "submitter", "correct horse battery");
    expect(await store.checkLogin("clerk", "correct horse battery")).toMatchObject({ role: "submitter" });
    expect(await store.checkLogin("clerk", "wrong horse battery")).toBeUndefined();
    expect(await store.checkLogin("nobody", "correct horse battery")).toBeUndefined();
    const session = await store.createSession("clerk");
    expect(await store.principalForSession(session)).toEqual({
      kind: "user",
      name: "clerk",
      role: "submitter",
    });
    await store.disableUser("clerk");
    expect(await store.checkLogin("clerk", "correct horse battery")).toBeUndefined();
    expect(await store.principalForSession(session)).toBeUndefined();
    const raw = JSON.stringify(await redis.hgetall(`${prefix}:auth:user:clerk`));
    expect(raw).not.toContain("correct horse battery");
    expect(raw).toContain("scrypt$");
  });

  it("refuses short passwords, unknown roles, bad names and a second user of the same name", async () => {
    await expect(store.addUser("shorty", "viewer", "short")).rejects.toMatchObject({ code: "WEAK_PASSWORD" });
    await expect(store.addUser("who", "root", "long enough password")).rejects.toMatchObject({
      code: "INVALID_ROLE",
    });
    await expect(store.addUser("a b", "viewer", "long enough password")).rejects.toMatchObject({
      code: "INVALID_NAME",
    });
    await store.addUser("twice", "viewer", "long enough password");
    await expect(store.addUser("twice", "admin", "long enough password")).rejects.toMatchObject({
      code: "EXISTS",
    });
    expect((await store.getUser("twice"))?.role).toBe("viewer");
  });

  it("keeps only a token's hash, and a revoked token stops working", async () => {
    const { token } = await store.createToken("erp", "submitter", "test");
    expect(token.startsWith(TOKEN_PREFIX)).toBe(true);
    expect(await store.principalForToken(token)).toEqual({ kind: "token", name: "erp", role: "submitter" });
    const keys = await redis.keys(`${prefix}:auth:*`);
    for (const key of keys) {
      const type = await redis.type(key);
      const dump = type === "hash" ? JSON.stringify(await redis.hgetall(key)) : "";
      expect(dump).not.toContain(token);
    }
    expect(await store.principalForToken(`${token}x`)).toBeUndefined();
    await store.revokeToken("erp");
    expect(await store.principalForToken(token)).toBeUndefined();
    await expect(store.revokeToken("erp")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("AuditTrail", () => {
  it("pages the newest entries first with a cursor", async () => {
    const audit = new AuditTrail(redis, `${prefix}-trail`);
    for (let i = 0; i < 5; i++) {
      await audit.record({
        actor: { kind: "cli", name: "ops" },
        action: "test.step",
        target: `t${i}`,
        from: "cli",
        outcome: "ok",
      });
    }
    const first = await audit.list({ limit: 3 });
    expect(first.data.map((e) => e.target)).toEqual(["t4", "t3", "t2"]);
    expect(first.nextCursor).not.toBeNull();
    const second = await audit.list({ limit: 3, cursor: first.nextCursor ?? undefined });
    expect(second.data.map((e) => e.target)).toEqual(["t1", "t0"]);
    expect(second.nextCursor).toBeNull();
    await deleteKeys(redis, `${prefix}-trail`);
  });
});

describe("payouts user / payouts token", () => {
  // Each command is a child process (seconds on a loaded machine): few calls, each asserting much.
  it("adds a user with the password from standard input, lists them, refuses a weak password", {
    timeout: 120_000,
  }, async () => {
    const added = await cli(["user", "add", "ops-lead", "--role", "admin"], "a long admin password\n");
    expect(added).toMatchObject({ code: 0 });
    expect(added.stdout).toContain("ops-lead added with role admin");
    expect(await store.checkLogin("ops-lead", "a long admin password")).toMatchObject({ role: "admin" });
    await store.disableUser("ops-lead");
    expect((await cli(["user", "list"])).stdout).toMatch(/ops-lead\s+admin\s+disabled/);
    const weak = await cli(["user", "add", "weak", "--role", "viewer"], "short\n");
    expect(weak.code).toBe(2);
    expect(weak.stderr).toContain("at least 10 characters");
  });

  it("prints a token once, revokes it, and both changes are in the audit trail", {
    timeout: 120_000,
  }, async () => {
    const created = await cli(["token", "create", "nightly-erp", "--role", "submitter"]);
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    expect(token.startsWith(TOKEN_PREFIX)).toBe(true);
    expect(await store.principalForToken(token)).toMatchObject({ name: "nightly-erp", role: "submitter" });
    expect((await cli(["token", "revoke", "nightly-erp"])).code).toBe(0);
    expect(await store.principalForToken(token)).toBeUndefined();
    const actions = (await new AuditTrail(redis, prefix).list({ limit: 20 })).data.map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(["user.add", "token.create", "token.revoke"]));
  });
});
