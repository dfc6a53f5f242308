import { createHash } from "node:crypto";
import { appendFile, mkdir, mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { changeSince, snapshotPathOf, takeSnapshot } from "../../../src/watch/read-snapshot.js";

let dir: string;
let claimed: string;
const CONTENT = "reference,amount\nA-1,1250.00\nA-2,80.00\n";

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "payouts-snapshot-"));
  claimed = path.join(dir, "20260101T000000-0000abcd", "pay.csv");
  await mkdir(path.dirname(claimed));
  await writeFile(claimed, CONTENT);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("a snapshot of a claimed sheet", () => {
  it("holds exactly its bytes, under its own name in the claim's hidden folder, with their hash", async () => {
    const snap = await takeSnapshot(claimed);
    expect(snap.path).toBe(path.join(path.dirname(claimed), ".read", "pay.csv"));
    expect(snap.path).toBe(snapshotPathOf(claimed));
    expect(await readFile(snap.path, "utf8")).toBe(CONTENT);
    expect(snap.size).toBe(Buffer.byteLength(CONTENT));
    expect(snap.sha256).toBe(createHash("sha256").update(CONTENT).digest("hex"));
  });

  it("sees no change in a file left alone", async () => {
    const snap = await takeSnapshot(claimed);
    expect(await changeSince(claimed, snap)).toBeUndefined();
  });

  it("says how a file changed after it was read: grown, written to, or removed", async () => {
    const snap = await takeSnapshot(claimed);
    await appendFile(claimed, "A-3,5.00\n");
    expect(await changeSince(claimed, snap)).toMatch(/^its size changed from 39 to 48 bytes/);

    const again = await takeSnapshot(claimed);
    const grown = await readFile(claimed, "utf8");
    await writeFile(claimed, grown.replace("1250.00", "9999.00")); // the same size
    expect(await changeSince(claimed, again)).toMatch(/^it was written to \(modified /);

    const third = await takeSnapshot(claimed);
    // Setting the old modification time back still moves the change time: still a change.
    await utimes(claimed, new Date(third.mtimeMs), new Date(third.mtimeMs));
    expect(await changeSince(claimed, third)).toMatch(/^it was written to/);

    await rm(claimed);
    expect(await changeSince(claimed, third)).toBe("it was removed while it was being read");
  });

  it("an empty file is read as empty", async () => {
    await writeFile(claimed, "");
    const snap = await takeSnapshot(claimed);
    expect(snap.size).toBe(0);
    expect(await readFile(snap.path, "utf8")).toBe("");
    expect(await changeSince(claimed, snap)).toBeUndefined();
  });
});
