/**
 * vitest set-up file: when a test file ends, whatever child process it started and left running is
 * stopped, and the file's output says which (a test should stop its own; this is the safety net that
 * keeps a failed or timed-out test from leaving a `payouts demo` or a redis-server behind).
 */
import { afterAll } from "vitest";
import { stopLeftoverChildren } from "./child-processes.js";

afterAll(async () => {
  for (const left of await stopLeftoverChildren()) {
    process.stderr.write(`a test left this process running; stopped it: ${left}\n`);
  }
}, 30_000);
