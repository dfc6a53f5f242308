/**
 * Files shipped with the package (samples, templates), found from the running module so the same code
 * works from `src/` (tests) and from `dist/src/` (the built CLI).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Absolute path of `relativePath` (e.g. `samples/payouts-valid.csv`) in the package. */
export function packageFile(relativePath: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = resolve(dir, relativePath);
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error(
    `${relativePath} is missing from the package (looked above ${fileURLToPath(import.meta.url)})`,
  );
}

let version: string | undefined;

/**
 * The package's version, read once from its package.json: `payouts --version` and the service client's
 * User-Agent follow a release without a second place to edit.
 */
export function packageVersion(): string {
  if (version === undefined) {
    const manifest = JSON.parse(readFileSync(packageFile("package.json"), "utf8")) as { version?: unknown };
    if (typeof manifest.version !== "string") throw new Error("package.json has no version");
    version = manifest.version;
  }
  return version;
}
