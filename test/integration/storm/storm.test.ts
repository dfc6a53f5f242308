/**
 * The storm (see storm-runner.ts): random sandbox faults, outages that leave rows
 * in `error`, worker processes and the webhook server killed -9, a private Redis (AOF, as production
 * runs it) restarted several times, operator retries at random moments. Afterwards, against the
 * sandbox's ledger: exactly one live payment per row across all attempts, at the sheet's amount and
 * recorded on the row; the result file agrees with the ledger row by row; no Idempotency-Key ever
 * sent with two bodies (the sandbox's own evidence and a logging proxy's). `npm run soak` is the long
 * version and prints its figures.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { runStorm, type StormReport } from "./storm-runner.js";

let report: StormReport;
const soakMinutes = Number(process.env.SOAK_MINUTES ?? 0);

describe("storm: faults, outages, kills, Redis restarts and operator retries at once", () => {
  beforeAll(
    async () => {
      // `npm run soak -- --minutes N` sets SOAK_MINUTES: more rows and workers, a batch every
      // couple of minutes, N minutes of chaos.
      const minutes = soakMinutes;
      const seed = Number(process.env.STORM_SEED ?? (minutes > 0 ? Date.now() % 100_000 : 13));
      report =
        minutes > 0
          ? await runStorm({
              rows: 200,
              batches: Math.max(2, Math.ceil(minutes / 2)),
              chaosMs: minutes * 60_000,
              workers: 3,
              seed,
            })
          : await runStorm({ rows: 30, batches: 2, chaosMs: 30_000, workers: 2, seed });
      console.log(
        `storm (seed ${seed}): ${report.rows} rows in ${report.batches} batches, ${report.paidRows} paid once, ` +
          `${report.resultRowsAgreeing} result-file rows agree with the ledger; ${report.chaosEvents} chaos events: ` +
          `${report.kills} worker kill -9, ${report.serverKills} server kill -9, ${report.redisRestarts} Redis restarts, ` +
          `${report.outages} outages; ${report.retriesStarted} retries started; ${report.createRequests} payment requests, ` +
          `${report.webhookDeliveries} webhook deliveries accepted ${JSON.stringify(report.webhookAnswers)}; keys with two bodies: ${report.keysWithTwoBodies.length} (proxy), ` +
          `${report.keysReusedAtSandbox.length} (sandbox); ${report.problems.length} problems`,
      );
    },
    240_000 + 300_000 + soakMinutes * 180_000,
  );

  it("pays every row exactly once, at the sheet's amount, and the result file agrees with the ledger", () => {
    expect(report.problems).toEqual([]);
    expect(report.paidRows).toBe(report.rows);
    expect(report.resultRowsAgreeing).toBe(report.rows);
  });

  it("never sends an Idempotency-Key with two bodies (the sandbox's evidence and the proxy's)", () => {
    expect(report.keysWithTwoBodies).toEqual([]);
    expect(report.keysReusedAtSandbox).toEqual([]);
  });

  it("really went through the storm: kills, several Redis restarts, webhooks, outages that made retries start new attempts", () => {
    expect(report.kills).toBeGreaterThan(0);
    expect(report.serverKills).toBeGreaterThan(0);
    expect(report.redisRestarts).toBeGreaterThanOrEqual(2);
    expect(report.webhookDeliveries).toBeGreaterThan(0);
    expect(report.outages).toBeGreaterThan(0);
    expect(report.retriesStarted).toBeGreaterThan(0);
  });
});
