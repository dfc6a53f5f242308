import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";
import { BROWSER_TESTS, browserTestsSkippedLine, findChromium } from "./test/support/chromium.js";

// The browser tests need Chromium. Without it they are left out (test/support/global-setup.ts says so
// in one line) so that the rest of the suite runs on a machine that has none; CI sets
// BROWSER_TESTS=required so that a missing Chromium fails the run instead of passing it quietly.
const chromium = findChromium();
if (!chromium.found && process.env.BROWSER_TESTS === "required") {
  throw new Error(`BROWSER_TESTS=required: ${browserTestsSkippedLine(chromium.reason)}`);
}

export default defineConfig({
  // Tests run the sandbox package from its sources (as the typecheck does through the "payouts-source"
  // condition), so a change to it is tested without rebuilding it; the CLI runs its built dist/.
  resolve: {
    alias: { "@payouts/sandbox": fileURLToPath(new URL("packages/sandbox/src/index.ts", import.meta.url)) },
  },
  test: {
    include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    exclude: [...configDefaults.exclude, ...(chromium.found ? [] : [`${BROWSER_TESTS}/**`])],
    // Finds or starts the Redis the tests use (REDIS_URL) and reports a missing Chromium.
    globalSetup: ["test/support/global-setup.ts"],
    // Stops whatever a test file started as a child process and left running (a failed assertion
    // before its own clean-up), so no test leaves a process behind.
    setupFiles: ["test/support/reap-children.ts"],
    // Integration tests start real servers and a real Redis; give them room on a shared 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for what a page or a process will show: a second (vitest's default) is less
    // than a log-in or a redraw takes while both cores are busy with the other fork. A poll that
    // never sees what it waits for still fails, five seconds later.
    expect: { poll: { timeout: 5_000 } },
    pool: "forks",
    // vitest's default is one fork fewer than the machine's cores: a single fork on a 2-core machine,
    // so the files ran one after another although most of their time is spent waiting on child
    // processes, Redis and timers. Two forks keep both cores busy; the time-outs above leave room
    // for the extra load.
    maxWorkers: 2,
    // Tests reuse the same sheets across batches; the cross-batch duplicate check is tested with its
    // window set explicitly (test/integration/duplicates), so it is off by default here.
    env: { PAYOUTS_DUPLICATE_WINDOW_DAYS: "0" },
  },
});
