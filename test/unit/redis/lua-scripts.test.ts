/**
 * The Lua loader: every `.lua` file under src/ is a script a module defines (or a helper one includes),
 * every script compiles in Redis, and the constants in front of a script read in Lua as the TypeScript
 * values they come from, so a rule kept in TypeScript is the rule the script applies.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  APPROVAL_EXPIRED,
  APPROVAL_REJECTED,
  GIVE_UP_ROW_STATES,
  REFERENCE_REUSED,
  RETRYABLE_ROW_STATES,
  ROW_STATES,
  TERMINAL_ROW_STATES,
} from "../../../src/batches/index.js";
import {
  FENCE_SEND,
  HISTORY_MAX,
  START_NEW_ATTEMPT,
  TRANSITION_ROW,
} from "../../../src/batches/redis-scripts.js";
import { PAYMENT_ID_MARK } from "../../../src/batches/row-fields.js";
import {
  connectRedis,
  type LuaScript,
  type LuaValue,
  luaLiteral,
  luaScript,
  luaScripts,
} from "../../../src/redis/index.js";
// Every module that defines scripts, so that each of them is checked below.
import "../../../src/approvals/approval-store.js";
import "../../../src/batch-control/breaker.js";
import "../../../src/payouts-api/shared-rate-limit.js";
import "../../../src/reconcile/look-index.js";
import "../../../src/server/webhook-dedupe.js";
import { deleteKeys } from "../../integration/pipeline/helpers.js";
import { REDIS_URL, uniquePrefix } from "../../support/redis-keys.js";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../../src");

let redis: Redis;
const prefix = uniquePrefix("lua");

beforeAll(() => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

/** `value` as cjson encodes its Lua twin: a set is an object of `true`s. */
function asJson(value: LuaValue): unknown {
  if (value instanceof Set) return Object.fromEntries([...value].map((k) => [k, true]));
  if (Array.isArray(value)) return value.map(asJson);
  if (typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, LuaValue>).map(([k, v]) => [k, asJson(v)]),
    );
  }
  return value;
}

/** The script's constants as Lua reads them from its preamble. */
async function constantsInLua(script: LuaScript): Promise<Record<string, unknown>> {
  const names = Object.keys(script.constants);
  const preamble = script.source.split("\n").slice(0, names.length).join("\n");
  const json = await redis.eval(
    `${preamble}\nreturn cjson.encode({${names.map((n) => `${n}=${n}`).join(", ")}})`,
    0,
  );
  return JSON.parse(String(json)) as Record<string, unknown>;
}

const keysOf = (table: unknown) => Object.keys(table as object).sort();

describe("the Lua scripts", () => {
  it("are every .lua file under src/ (or a helper a script includes), and each compiles in Redis", async () => {
    const files = readdirSync(SRC, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".lua"))
      .map((f) => join(SRC, f));
    const included = new Set(
      files.flatMap((f) =>
        [...readFileSync(f, "utf8").matchAll(/^-- include: (\S+)$/gm)].map((m) => join(dirname(f), m[1]!)),
      ),
    );
    const defined = new Set(luaScripts().map((s) => s.file));
    expect(files.filter((f) => !defined.has(f) && !included.has(f))).toEqual([]);
    expect(files.length).toBeGreaterThan(0);
    for (const script of luaScripts()) {
      expect(await redis.script("LOAD", script.source), script.name).toMatch(/^[0-9a-f]{40}$/);
    }
  });

  it("read their constants in Lua as the TypeScript values they come from", async () => {
    for (const script of luaScripts()) {
      expect(await constantsInLua(script), script.name).toEqual(asJson(script.constants));
    }
  });

  it("apply the row state machine of row-state.ts: terminal states, ranks, give-up, retryable states and codes", async () => {
    const transition = await constantsInLua(TRANSITION_ROW);
    expect(keysOf(transition.TERMINAL)).toEqual([...TERMINAL_ROW_STATES].sort());
    expect(keysOf(transition.GIVE_UP)).toEqual([...GIVE_UP_ROW_STATES].sort());
    expect(keysOf(transition.RANK)).toEqual([...ROW_STATES].sort());
    // Terminal states share the highest rank; every other state ranks below it.
    const rank = transition.RANK as Record<string, number>;
    const top = Math.max(...Object.values(rank));
    for (const state of ROW_STATES)
      expect(rank[state] === top, state).toBe(TERMINAL_ROW_STATES.includes(state));
    expect(transition.HISTORY_MAX).toBe(HISTORY_MAX);
    expect(transition.PAYMENT_ID_MARK).toBe(PAYMENT_ID_MARK);
    const retry = await constantsInLua(START_NEW_ATTEMPT);
    expect(keysOf(retry.RETRYABLE)).toEqual([...RETRYABLE_ROW_STATES].sort());
    expect(keysOf(retry.NEVER_RETRIED)).toEqual(
      [APPROVAL_EXPIRED, APPROVAL_REJECTED, REFERENCE_REUSED].sort(),
    );
  });
});

describe("the Lua loader", () => {
  it("writes TypeScript values as Lua literals, escaping quotes, backslashes and control bytes", async () => {
    const text = "it's a \\ path\n\u0001\u0002" + "9";
    expect(luaLiteral(text)).toBe("'it\\'s a \\\\ path\\010\\001\\0029'");
    expect(await redis.eval(`return ${luaLiteral(text)}`, 0)).toBe(text);
    expect(luaLiteral(new Set(["a"]))).toBe("{['a']=true}");
    expect(luaLiteral({ a: [1, "b"], c: true })).toBe("{['a']={1,'b'},['c']=true}");
  });

  it("puts the constants and the included helpers in front of a file, and runs it", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "payouts-lua-")), "demo", "lua");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "helper.lua"), "local function twice(x) return x .. x end\n");
    writeFileSync(
      join(dir, "say.lua"),
      "-- Says it twice.\n-- include: helper.lua\nreturn twice(WORD .. ARGV[1])\n",
    );
    const script = luaScript(pathToFileURL(join(dir, "say.lua")), { WORD: "hi" });
    expect(script.name).toBe("lua:demo/say");
    expect(script.source).toBe(
      "local WORD = 'hi'\n-- Says it twice.\nlocal function twice(x) return x .. x end\nreturn twice(WORD .. ARGV[1])\n",
    );
    expect(await script.run(redis, [`${prefix}:k`], ["!"])).toBe("hi!hi!");
    expect(await script.run(redis, [`${prefix}:k`], ["?"])).toBe("hi?hi?");
  });

  it("runs a script Redis does not hold yet once (EVAL after NOSCRIPT), then by its SHA-1", async () => {
    // A script no Redis has seen: its own counter key in its text makes it unique to this run.
    const dir = join(mkdtempSync(join(tmpdir(), "payouts-lua-")), "fresh", "lua");
    mkdirSync(dir, { recursive: true });
    const counter = `${prefix}:runs:${Date.now()}:${Math.random()}`;
    writeFileSync(join(dir, "count.lua"), `return redis.call('INCR', KEYS[1]) -- ${counter}\n`);
    const script = luaScript(pathToFileURL(join(dir, "count.lua")));
    const sha = createHash("sha1").update(script.source).digest("hex");
    expect(await redis.script("EXISTS", sha)).toEqual([0]);
    expect(await script.run(redis, [counter], [])).toBe(1);
    expect(await redis.script("EXISTS", sha)).toEqual([1]);
    expect(await script.run(redis, [counter], [])).toBe(2);
    expect(await redis.get(counter)).toBe("2");
  });

  it("rejects with the script's own error (not retried as EVAL)", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "payouts-lua-")), "broken", "lua");
    mkdirSync(dir, { recursive: true });
    const counter = `${prefix}:broken:${Date.now()}`;
    writeFileSync(join(dir, "fail.lua"), "redis.call('INCR', KEYS[1])\nreturn redis.error_reply('NO way')\n");
    const script = luaScript(pathToFileURL(join(dir, "fail.lua")));
    await expect(script.run(redis, [counter], [])).rejects.toThrow(/NO way/);
    await expect(script.run(redis, [counter], [])).rejects.toThrow(/NO way/);
    expect(await redis.get(counter)).toBe("2");
  });

  it("runs on an auto-pipelined connection in the same tick as other commands", async () => {
    const piped = connectRedis(REDIS_URL, { autoPipelining: true });
    try {
      const row = `${prefix}:batch:b:row:R1`;
      const [, fence] = await Promise.all([
        piped.get(row),
        FENCE_SEND.run(piped, [row, `${prefix}:stop`], ["1", "0", "", "0", "0"]),
      ]);
      expect(fence).toEqual(["missing", "", ""]);
    } finally {
      piped.disconnect();
    }
  });

  it("runs a script loaded after an auto-pipelined connection was made, and defines no command on it", async () => {
    const piped = connectRedis(REDIS_URL, { autoPipelining: true });
    try {
      const dir = join(mkdtempSync(join(tmpdir(), "payouts-lua-")), "late", "lua");
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "one.lua"), "return 1\n");
      const late = luaScript(pathToFileURL(join(dir, "one.lua")));
      const [, one] = await Promise.all([piped.get(`${prefix}:x`), late.run(piped, [`${prefix}:x`], [])]);
      expect(one).toBe(1);
      // ioredis copies a connection's defined commands into every pipeline it builds: there are none.
      expect(Object.keys((piped as unknown as { scriptsSet: object }).scriptsSet)).toEqual([]);
    } finally {
      piped.disconnect();
    }
  });

  it("refuses a constant the script does not use", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "payouts-lua-")), "demo", "lua");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "plain.lua"), "return 1\n");
    expect(() => luaScript(pathToFileURL(join(dir, "plain.lua")), { UNUSED: 1 })).toThrow(/not used/);
  });
});
