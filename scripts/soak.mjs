// `npm run soak -- --minutes N`: the storm test (test/integration/storm) run for N minutes of chaos
// (default 5) with more rows (a batch of 200 every two minutes) and three workers; prints the rows,
// chaos events, kills, Redis restarts, outages, retries and webhook deliveries it survived, and
// what the ledger check found. STORM_SEED=n replays a run.
import { spawnSync } from "node:child_process";

const i = process.argv.indexOf("--minutes");
const minutes = i >= 0 ? Number(process.argv[i + 1]) : 5;
if (!(minutes > 0)) {
  console.error("usage: npm run soak -- --minutes N (N > 0)");
  process.exit(2);
}
const result = spawnSync(
  "npx",
  ["vitest", "run", "test/integration/storm/storm.test.ts", "--testTimeout", "0", "--hookTimeout", "0"],
  {
    stdio: "inherit",
    env: { ...process.env, SOAK_MINUTES: String(minutes) },
  },
);
process.exit(result.status ?? 1);
