/**
 * Files shipped with the package (samples, templates), found from the running module so the same code
 * works from `src/` (tests) and from `dist/src/` (the built CLI).
 */
import { existsSync } from "node:fs";
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
