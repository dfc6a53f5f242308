/**
 * The sandbox is a second, independent reading of the service's spec: it must share no code with the
 * client, or a misreading made once would be made on both sides and no test could see it. So nothing
 * in packages/sandbox may reach outside its package (only Node's built-ins and its declared
 * dependencies), and the rest of the repository may use it only through its public face, the package
 * name `@payouts/sandbox`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const SANDBOX = join(ROOT, "packages", "sandbox");

/** Every module specifier in a TypeScript source: static imports and re-exports, and dynamic imports. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g))
    found.push(m[1] as string);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|mts|js|mjs)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .filter((f) => !f.includes(`${sep}node_modules${sep}`) && !f.includes(`${sep}dist${sep}`));
}

const rel = (f: string) => relative(ROOT, f);

describe("the sandbox package stands alone", () => {
  it("imports nothing from outside packages/sandbox but Node built-ins and its declared dependencies", () => {
    const manifest = JSON.parse(readFileSync(join(SANDBOX, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    const allowed = new Set([...Object.keys(manifest.dependencies ?? {}), "vitest", "fast-check"]);
    const builtins = new Set(builtinModules);
    const offending: string[] = [];
    for (const file of sourceFiles(SANDBOX)) {
      for (const spec of specifiers(readFileSync(file, "utf8"))) {
        if (spec.startsWith(".")) {
          const target = resolve(dirname(file), spec);
          if (!`${target}${sep}`.startsWith(`${SANDBOX}${sep}`))
            offending.push(`${rel(file)} imports ${spec}`);
          continue;
        }
        const name = spec.startsWith("@")
          ? spec.split("/").slice(0, 2).join("/")
          : (spec.split("/")[0] as string);
        const isTest = file.startsWith(join(SANDBOX, "test"));
        const ok =
          spec.startsWith("node:") ||
          builtins.has(name) ||
          manifest.dependencies?.[name] !== undefined ||
          (isTest && allowed.has(name));
        if (!ok) offending.push(`${rel(file)} imports ${spec} (not a dependency in its package.json)`);
      }
    }
    expect(offending).toEqual([]);
  });

  it("is used by the rest of the repository only through its package name", () => {
    const offending: string[] = [];
    for (const dir of ["src", "test", "bench", "workers", "scripts"]) {
      for (const file of sourceFiles(join(ROOT, dir))) {
        for (const spec of specifiers(readFileSync(file, "utf8"))) {
          const reachesIn =
            spec.startsWith("@payouts/sandbox/") ||
            (spec.startsWith(".") && `${resolve(dirname(file), spec)}${sep}`.startsWith(`${SANDBOX}${sep}`));
          if (reachesIn) offending.push(`${rel(file)} imports ${spec}: use "@payouts/sandbox"`);
        }
      }
    }
    expect(offending).toEqual([]);
  });
});
