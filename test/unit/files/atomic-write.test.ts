import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../../src/files/index.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "payouts-atomic-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("writeFileAtomic", () => {
  it("writes text and bytes, replacing an existing file, and leaves no temp file", async () => {
    const target = join(dir, "report.csv");
    await writeFileAtomic(target, "first");
    await writeFileAtomic(target, new TextEncoder().encode("second ✓"));
    expect(await readFile(target, "utf8")).toBe("second ✓");
    expect(await readdir(dir)).toEqual(["report.csv"]);
  });

  it("streams from a producer, ending the stream for it when it does not", async () => {
    const target = join(dir, "big.txt");
    await writeFileAtomic(target, async (out) => {
      for (let i = 0; i < 1000; i++) out.write(`line ${i}\n`);
    });
    const text = await readFile(target, "utf8");
    expect(text.split("\n")).toHaveLength(1001);
    expect(await readdir(dir)).toEqual(["big.txt"]);
  });

  it("keeps the old file and removes the temp file when the producer throws half-way", async () => {
    const target = join(dir, "result.csv");
    await writeFile(target, "old complete content");
    const failing = writeFileAtomic(target, async (out) => {
      out.write("half of the new ");
      await new Promise((resolve) => setImmediate(resolve));
      throw new Error("source failed");
    });
    await expect(failing).rejects.toThrow("source failed");
    expect(await readFile(target, "utf8")).toBe("old complete content");
    expect(await readdir(dir)).toEqual(["result.csv"]);
  });

  it("creates no target at all when the first write fails", async () => {
    const target = join(dir, "new.csv");
    await expect(
      writeFileAtomic(target, async () => {
        throw new Error("nothing to write");
      }),
    ).rejects.toThrow("nothing to write");
    expect(await readdir(dir)).toEqual([]);
  });

  it("fails without side effects when the directory does not exist", async () => {
    await expect(writeFileAtomic(join(dir, "missing", "x.csv"), "x")).rejects.toThrow(/ENOENT/);
    expect(await readdir(dir)).toEqual([]);
  });
});
