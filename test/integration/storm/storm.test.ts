/**
 * The short storm (issue 13, point 10): random sandbox faults (latency, 5xx, responses dropped after
 * the payment was stored, 429), two worker processes with short job locks, workers killed -9 at random,
 * a private Redis restarted (AOF on, as in production), operator retries at random moments. Afterwards,
 * against the sandbox's ledger: exactly one live payment per row across all attempts, at the sheet's
 * amount and recorded on the row, and no Idempotency-Key ever sent with two bodies (a logging proxy
 * between the workers and the sandbox sees every request). `npm run soak` is the long version.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { runStorm, type StormReport } from "./storm-runner.js";

let report: StormReport;
const soakMinutes = Number(process.env.SOAK_MINUTES ?? 0);

describe("storm: faults, kills, a Redis restart and operator retries at once", () => {
  beforeAll(
    async () => {
      // `npm run soak -- --minutes N` sets SOAK_MINUTES: more rows, more workers, N minutes of chaos.
      const minutes = soakMinutes;
      report =
        minutes > 0
          ? await runStorm({ rows: 400, chaosMs: minutes * 60_000, workers: 3, seed: Date.now() % 100_000 })
          : await runStorm({ rows: 40, chaosMs: 15_000, workers: 2, seed: 13 });
      if (minutes > 0) {
        console.log(
          `soak: ${report.rows} rows, ${report.paidRows} paid once, ${report.faultsInjected} chaos events, ` +
            `${report.kills} kill -9, ${report.redisRestarts} Redis restarts, ${report.retriesStarted} retries started, ` +
            `${report.keysWithTwoBodies.length} keys with two bodies, ${report.problems.length} problems`,
        );
      }
    },
    180_000 + soakMinutes * 120_000,
  );

  it("pays every row exactly once, at the sheet's amount, and never sends a key with two bodies", () => {
    expect(report.problems).toEqual([]);
    expect(report.keysWithTwoBodies).toEqual([]);
    expect(report.paidRows).toBe(report.rows);
    expect(report.kills).toBeGreaterThan(0);
    expect(report.redisRestarts).toBeGreaterThan(0);
  });
});
