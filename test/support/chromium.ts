/**
 * Where the browser tests find Chromium: CHROMIUM_PATH when set, else `chromium` (or
 * `chromium-browser`) on PATH. Read by vitest.config.ts (the browser tests are left out when it is
 * missing), by the global set-up (which says so in one line) and by ./browser.ts (which launches it).
 */
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";

/** What Debian and Ubuntu call the package, for the hint in the "not found" line. */
export const CHROMIUM_INSTALL_HINT = "apt-get install chromium";

/** The browser tests' folder, relative to the project root. */
export const BROWSER_TESTS = "test/browser";

export type ChromiumLookup = { found: true; path: string } | { found: false; reason: string };

export function findChromium(env: NodeJS.ProcessEnv = process.env): ChromiumLookup {
  const configured = env.CHROMIUM_PATH?.trim();
  if (configured) {
    return executable(configured)
      ? { found: true, path: configured }
      : { found: false, reason: `CHROMIUM_PATH=${configured} is not an executable file` };
  }
  for (const name of ["chromium", "chromium-browser"]) {
    for (const dir of (env.PATH ?? "").split(path.delimiter)) {
      if (dir === "") continue;
      const candidate = path.join(dir, name);
      if (executable(candidate)) return { found: true, path: candidate };
    }
  }
  return { found: false, reason: "no chromium on PATH and CHROMIUM_PATH is not set" };
}

/** The one line printed when the browser tests cannot run. */
export function browserTestsSkippedLine(reason: string): string {
  return (
    `browser tests (${BROWSER_TESTS}) not run: ${reason}; install Chromium ` +
    `(${CHROMIUM_INSTALL_HINT}) or set CHROMIUM_PATH to run them`
  );
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
