import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { lastTouchedMs, lookAtFiles, verdictAt } from "../../../src/watch/stability.js";

describe("the quiet period", () => {
  it("a file untouched for the quiet period is complete at once; one touched lately waits the rest", () => {
    expect(verdictAt(1_000, 12_000, 10_000)).toEqual({ kind: "stable" });
    expect(verdictAt(5_000, 12_000, 10_000)).toEqual({ kind: "wait", ms: 3_000 });
  });

  it("the last touch is the later of the modification and change times (a copier may set mtime back)", () => {
    expect(lastTouchedMs({ mtimeMs: 1_000, ctimeMs: 9_000 })).toBe(9_000);
    expect(lastTouchedMs({ mtimeMs: 9_500, ctimeMs: 9_000 })).toBe(9_500);
  });

  it("looks at many files in one pass: complete, waiting, gone", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "payouts-stability-"));
    try {
      await writeFile(path.join(dir, "a.csv"), "x");
      await writeFile(path.join(dir, "b.csv"), "y");
      const later = Date.now() + 60_000; // as seen a minute from now
      const looks = await lookAtFiles(dir, ["a.csv", "b.csv", "gone.csv"], 10_000, () => later);
      expect(looks.get("a.csv")).toEqual({ kind: "stable" });
      expect(looks.get("b.csv")).toEqual({ kind: "stable" });
      expect(looks.get("gone.csv")).toEqual({ kind: "gone" });
      const now = await lookAtFiles(dir, ["a.csv"], 10_000);
      expect(now.get("a.csv")?.kind).toBe("wait");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
