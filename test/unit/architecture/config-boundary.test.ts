/**
 * The environment is read once, at start-up, by the command line (src/cli) into the config
 * (src/config); everything below takes the values it is handed. A module that read `process.env`
 * itself would let two processes, or a test and production, run on different settings.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const SRC = join(ROOT, "src");

/** Where the environment may be read: the entry points and the config they build. */
const HOMES = [join(SRC, "cli") + sep, join(SRC, "config") + sep];

/**
 * Reads that are not settings. The OS user names the person at the shell in audit entries
 * (`cli:<user>`); it moves to the command line with the work on that actor.
 */
const EXCEPTIONS = new Set(["src/approvals/identity.ts"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|mts|js|mjs)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

describe("the environment has one reader", () => {
  it("no module outside src/cli and src/config reads process.env", () => {
    const readers: string[] = [];
    for (const file of sourceFiles(SRC)) {
      if (HOMES.some((home) => file.startsWith(home))) continue;
      const name = relative(ROOT, file).split(sep).join("/");
      if (EXCEPTIONS.has(name)) continue;
      const lines = readFileSync(file, "utf8").split("\n");
      lines.forEach((line, i) => {
        if (/\bprocess\.env\b/.test(line)) readers.push(`${name}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(readers).toEqual([]);
  });

  it("below the command line and the composition root (src/app), the config is only a type", () => {
    const loaders: string[] = [];
    const builders = [...HOMES, join(SRC, "app") + sep];
    for (const file of sourceFiles(SRC)) {
      if (builders.some((home) => file.startsWith(home))) continue;
      const source = readFileSync(file, "utf8");
      for (const m of source.matchAll(
        /import\s+(type\s+)?\{[^}]*\}\s*from\s*["']([^"']*\/config\/index\.js)["']/g,
      )) {
        if (!m[1]) loaders.push(`${relative(ROOT, file).split(sep).join("/")} imports values from ${m[2]}`);
      }
    }
    expect(loaders).toEqual([]);
  });
});
