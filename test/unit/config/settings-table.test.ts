/**
 * docs/operating.md's settings table and the config schema (src/config) say the same: every setting the
 * schema reads is listed, nothing else is, and a default the schema holds is the one the table states.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SETTING_NAMES, settingDefault } from "../../../src/config/index.js";

const OPERATING = path.join(import.meta.dirname, "../../../docs/operating.md");

async function settingsTable(): Promise<Map<string, string>> {
  const text = await readFile(OPERATING, "utf8");
  const section = text.slice(
    text.indexOf("## Configuration"),
    text.indexOf("\n## ", text.indexOf("## Configuration") + 3),
  );
  const table = new Map<string, string>();
  for (const line of section.split("\n")) {
    const cells = line.split(" | ");
    if (!line.startsWith("| `") || cells.length < 3) continue;
    for (const [, name] of cells[0]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) table.set(name!, cells[1]!);
  }
  return table;
}

describe("the settings table of docs/operating.md", () => {
  it("lists every setting the config schema reads, and no other", async () => {
    const table = await settingsTable();
    expect([...table.keys()].sort()).toEqual([...SETTING_NAMES].sort());
  });

  it("states the default the schema holds", async () => {
    const table = await settingsTable();
    for (const name of SETTING_NAMES) {
      const fallback = settingDefault(name);
      if (fallback === undefined) continue;
      expect([name, table.get(name)]).toEqual([name, expect.stringContaining(`\`${String(fallback)}\``)]);
    }
  });
});
