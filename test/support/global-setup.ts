/**
 * The test run's one set-up (vitest `globalSetup`), so `npm test` works on a fresh machine:
 *
 * - Redis: the one at REDIS_URL (default 127.0.0.1:6379) when it answers, else a private
 *   `redis-server` from PATH on a free port, the same way `payouts demo` starts one, stopped when the
 *   run ends. Its URL reaches every test file as REDIS_URL. With neither, the run stops at once with
 *   one line saying what to install, instead of every test waiting out its connection time-outs.
 * - Chromium: when it is missing, vitest.config.ts leaves the browser tests out and this says so in
 *   one line (set BROWSER_TESTS=required to make that an error instead, as CI does).
 */
import type { TestProject } from "vitest/node";
import { RedisUnavailableError, redisAnswers, startPrivateRedis } from "../../src/demo/private-redis.js";
import { browserTestsSkippedLine, findChromium } from "./chromium.js";

export const DEFAULT_TEST_REDIS_URL = "redis://127.0.0.1:6379";

export default async function setup(_project: TestProject): Promise<() => Promise<void>> {
  const chromium = findChromium();
  if (!chromium.found) process.stderr.write(`${browserTestsSkippedLine(chromium.reason)}\n`);

  const given = process.env.REDIS_URL?.trim() || DEFAULT_TEST_REDIS_URL;
  if (await redisAnswers(given)) {
    process.env.REDIS_URL = given;
    return async () => undefined;
  }
  try {
    const redis = await startPrivateRedis();
    process.env.REDIS_URL = redis.url;
    process.stderr.write(
      `tests: no Redis answers at ${given}; using a private redis-server at ${redis.url} for this run\n`,
    );
    return () => redis.stop();
  } catch (err) {
    if (!(err instanceof RedisUnavailableError)) throw err;
    // One line and a stop: without Redis most tests could only wait out their time-outs.
    process.stderr.write(`tests: no Redis answers at REDIS_URL=${given} and ${err.message}\n`);
    process.exit(2);
  }
}
