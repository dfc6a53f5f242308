/**
 * Lua lives in `.lua` files, run through the one loader (src/redis/lua-scripts.ts): no TypeScript
 * module under src/ holds Lua source in a string, and none but the loader runs a script itself.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const LOADER = "src/redis/lua-scripts.ts";

function tsFiles(): string[] {
  return readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join("src", f));
}

/** Lines of a module that read as Lua, or as running a script without the loader. */
function offendingLines(file: string): string[] {
  const lua = /redis\.p?call\(|\b(KEYS|ARGV)\[\d|^\s*local \w+( ?,\s*\w+)* = |^\s*end\s*$/;
  const runsScript = /\.(evalsha|eval|defineCommand)\(|["'`](EVALSHA|EVAL|SCRIPT)["'`]/i;
  return readFileSync(join(ROOT, file), "utf8")
    .split("\n")
    .map((line, i) => ({ line, n: i + 1 }))
    .filter(({ line }) => lua.test(line) || (file !== LOADER && runsScript.test(line)))
    .map(({ line, n }) => `${relative(ROOT, join(ROOT, file))}:${n}: ${line.trim()}`);
}

describe("Lua", () => {
  it("is kept in .lua files: no module under src/ holds Lua or runs a script but the loader", () => {
    const files = tsFiles();
    expect(files).toContain(LOADER);
    expect(files.flatMap(offendingLines)).toEqual([]);
  });
});
