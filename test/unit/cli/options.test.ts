/** The shared CLI options: one `--redis-prefix` for every command, and the version of package.json. */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { packageVersion } from "../../../src/assets/index.js";
import { DEFAULT_KEY_PREFIX } from "../../../src/batches/index.js";
import { redisPrefixOption } from "../../../src/cli/options.js";

describe("redisPrefixOption", () => {
  const parse = (args: string[]) =>
    new Command().exitOverride().addOption(redisPrefixOption()).parse(args, { from: "user" }).opts();

  it("defaults to the batch store's own prefix and takes another one", () => {
    expect(parse([])).toEqual({ redisPrefix: DEFAULT_KEY_PREFIX });
    expect(parse(["--redis-prefix", "test-1"])).toEqual({ redisPrefix: "test-1" });
  });
});

describe("packageVersion", () => {
  it("is the version in package.json", async () => {
    const manifest = JSON.parse(
      await readFile(path.join(import.meta.dirname, "../../../package.json"), "utf8"),
    );
    expect(packageVersion()).toBe(manifest.version);
  });
});
