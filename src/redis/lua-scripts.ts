/**
 * The one loader of the tool's Lua scripts. Each script is a `.lua` file in a `lua/` folder beside the
 * module that runs it (the build copies them into dist/), read once when that module loads.
 *
 * - **Constants from TypeScript.** A value a script shares with TypeScript (a state table, an error
 *   code, a limit) is not typed again in Lua: the module hands it over and it stands in front of the
 *   script as a Lua local (`local RANK = {...}`), so each rule keeps its one home in TypeScript.
 * - **Shared helpers.** A line `-- include: <file>.lua` is replaced by that file, found relative to the
 *   script (helpers several scripts use: a row's history lines, Redis's clock in ./lua/now-ms.lua).
 * - **Running.** A script runs as EVALSHA of its source's SHA-1, and as EVAL (which also loads it)
 *   when Redis answers NOSCRIPT (the first run on a fresh Redis, one restarted or whose scripts were
 *   flushed): a NOSCRIPT means the script did not run, so running it then is its one run. Nothing is
 *   defined on a connection: ioredis copies a connection's defined commands into every pipeline it
 *   builds, and an auto-pipelined connection builds one per tick of commands, so defined scripts cost
 *   every command on the connection (BullMQ's own scripts stay on BullMQ's connections). Any
 *   connection runs any script, at any time; on an auto-pipelined one the EVALSHA joins the tick's
 *   pipeline like any command, and on a Cluster it goes to the node of its first key, as EVAL would.
 *   Arguments are the script's KEYS then its ARGV.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { RedisClient } from "./connect.js";

/** What TypeScript can hand to a script: a Set becomes a Lua set (`{['a']=true}`), an array a list. */
export type LuaValue =
  | string
  | number
  | boolean
  | ReadonlySet<string>
  | readonly LuaValue[]
  | { readonly [key: string]: LuaValue };

export type LuaArg = string | number | Buffer;

export interface LuaScript {
  /** The script's name: `lua:<folder>/<file>` (e.g. `lua:batches/fence-send`). */
  readonly name: string;
  /** The `.lua` file's path. */
  readonly file: string;
  /** The values put in front of the file as Lua locals. */
  readonly constants: Readonly<Record<string, LuaValue>>;
  /** What Redis runs: the constants, then the file with its includes. */
  readonly source: string;
  /** Runs the script on `redis`; the reply as Redis gave it (strings, numbers, arrays). */
  run(redis: RedisClient, keys: readonly string[], args: readonly LuaArg[]): Promise<unknown>;
}

const INCLUDE = /^-- include: ([\w./-]+\.lua)[ \t]*$/gm;
const CONSTANT_NAME = /^[A-Z][A-Z0-9_]*$/;

/** The scripts by name: two files may not claim one name (`<folder>/<file>` is unique in src/). */
const defined = new Map<string, LuaScript>();

/** Every script defined so far (by the modules loaded). */
export function luaScripts(): LuaScript[] {
  return [...defined.values()];
}

/**
 * The script in `file` (a URL beside the calling module: `new URL("./lua/x.lua", import.meta.url)`),
 * with `constants` as Lua locals in front of it. Every constant must be used by the script.
 */
export function luaScript(file: URL, constants: Readonly<Record<string, LuaValue>> = {}): LuaScript {
  const path = fileURLToPath(file);
  const name = `lua:${basename(dirname(dirname(path)))}/${basename(path, ".lua")}`;
  const body = withIncludes(path);
  const source = luaPreamble(constants, body) + body;
  const sha = createHash("sha1").update(source).digest("hex");
  const earlier = defined.get(name);
  if (earlier !== undefined && earlier.source !== source)
    throw new Error(`two Lua scripts are named ${name}`);
  const script: LuaScript = {
    name,
    file: path,
    constants,
    source,
    run(redis, keys, args) {
      return redis.evalsha(sha, keys.length, ...keys, ...args).catch((err: unknown) => {
        // NOSCRIPT: Redis does not hold the script (so it did not run it); EVAL runs and loads it.
        if (!isNoScript(err)) throw err;
        return redis.eval(source, keys.length, ...keys, ...args);
      });
    },
  };
  defined.set(name, script);
  return script;
}

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith("NOSCRIPT");
}

function withIncludes(path: string, seen: readonly string[] = []): string {
  if (seen.includes(path)) throw new Error(`${path} includes itself`);
  return readFileSync(path, "utf8").replace(INCLUDE, (_, file: string) =>
    withIncludes(`${dirname(path)}/${file}`, [...seen, path]).trimEnd(),
  );
}

/**
 * The Lua locals for `constants`, one line each, for a script whose text (`uses`) must name every one:
 * a constant no script reads is a rule typed in TypeScript for nothing.
 */
function luaPreamble(constants: Readonly<Record<string, LuaValue>>, uses: string): string {
  let lines = "";
  for (const [name, value] of Object.entries(constants)) {
    if (!CONSTANT_NAME.test(name)) throw new Error(`Lua constant ${name}: use UPPER_CASE names`);
    if (!new RegExp(`\\b${name}\\b`).test(uses)) throw new Error(`Lua constant ${name} is not used`);
    lines += `local ${name} = ${luaLiteral(value)}\n`;
  }
  return lines;
}

/** `value` as a Lua literal. */
export function luaLiteral(value: LuaValue): string {
  if (typeof value === "string") return luaString(value);
  if (typeof value === "boolean") return String(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`Lua constant: ${value} is not a finite number`);
    return String(value);
  }
  if (value instanceof Set) return `{${[...value].map((k) => `[${luaString(k)}]=true`).join(",")}}`;
  if (Array.isArray(value)) return `{${value.map(luaLiteral).join(",")}}`;
  const table = value as { readonly [key: string]: LuaValue };
  return `{${Object.entries(table)
    .map(([k, v]) => `[${luaString(k)}]=${luaLiteral(v)}`)
    .join(",")}}`;
}

/** A Lua string literal: quotes, backslashes and control bytes escaped (`\001` for byte 1). */
function luaString(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control bytes are what is escaped here
  const escaped = text.replace(/[\\'\u0000-\u001f\u007f]/g, (c) =>
    c === "\\" || c === "'" ? `\\${c}` : `\\${String(c.charCodeAt(0)).padStart(3, "0")}`,
  );
  return `'${escaped}'`;
}
