/**
 * Every setting's default has one home, the config schema (src/config): a part handed a setting's
 * value takes it as given. A part that fell back to a default of its own when the value is missing
 * would be a second home, and the two drift (one command on 15 s, another on 30 s).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/index.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const SRC = join(ROOT, "src");
/** Where the config is built and handed out. */
const BUILDERS = ["cli", "config", "app"].map((dir) => join(SRC, dir) + sep);

/** The names settings travel under: the config's fields, and the time zone of the nightly run. */
const SETTING_FIELDS = [...Object.keys(loadConfig({})), "tz"];

describe("a setting's default lives in the config schema only", () => {
  it("no part below the command line falls back to a default for a setting it is handed", () => {
    const fallback = new RegExp(
      String.raw`\b(?:options|settings|opts|connection)\.(${SETTING_FIELDS.join("|")})\s*\?\?`,
    );
    const found: string[] = [];
    for (const entry of readdirSync(SRC, { withFileTypes: true, recursive: true })) {
      const file = join(entry.parentPath, entry.name);
      if (!entry.isFile() || !file.endsWith(".ts") || BUILDERS.some((b) => file.startsWith(b))) continue;
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (fallback.test(line)) found.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });
});
