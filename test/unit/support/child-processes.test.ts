import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { stopLeftoverChildren, trackChild } from "../../support/child-processes.js";

const sleeper = () =>
  trackChild(spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" }));

describe("child processes a test file leaves behind", () => {
  it("are stopped when the file ends, and named", async () => {
    const child = sleeper();
    const left = await stopLeftoverChildren(1_000);
    expect(left).toEqual([expect.stringContaining(`(pid ${child.pid})`)]);
    expect(child.exitCode !== null || child.signalCode !== null).toBe(true);
  });

  it("one the test killed itself, not yet reaped, is not called left behind", async () => {
    const child = sleeper();
    child.kill("SIGKILL");
    expect(await stopLeftoverChildren(1_000)).toEqual([]);
  });
});
