/** The metrics module: route names without ids, and the worker's /metrics listener. */
import { afterAll, describe, expect, it } from "vitest";
import {
  countReturnedRow,
  Registry,
  type RunningMetricsServer,
  renderMetrics,
  routeOf,
  serviceRequestHooks,
  startMetricsServer,
} from "../../../src/metrics/index.js";

let server: RunningMetricsServer | undefined;
afterAll(async () => server?.close());

describe("routeOf", () => {
  it("replaces ids so that one route is one series", () => {
    expect(routeOf("/payments/pay_3f8e840adaa6")).toBe("/payments/:id");
    expect(routeOf("/accounts/acct_ops_checking/balance?x=1")).toBe("/accounts/:id/balance");
    expect(routeOf("/limitations")).toBe("/limitations");
  });
});

describe("startMetricsServer", () => {
  it("serves process metrics and service latency at /metrics, and nothing else", async () => {
    serviceRequestHooks().onResponse?.({
      method: "GET",
      path: "/payments/pay_abc123",
      attempt: 1,
      status: 200,
      durationMs: 12,
    });
    server = await startMetricsServer({ port: 0, registries: [new Registry()] });
    const res = await fetch(server.url);
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toContain("payouts_process_cpu_seconds_total");
    expect(text).toMatch(
      /payouts_service_request_duration_seconds_count\{method="GET",route="\/payments\/:id",status="200"\} [1-9]/,
    );
    expect((await fetch(server.url.replace("/metrics", "/"))).status).toBe(404);
  });
});

describe("returned rows", () => {
  it("are counted in payouts_rows_returned_total", async () => {
    const read = async () =>
      Number(/^payouts_rows_returned_total (\d+)/m.exec(await renderMetrics())?.[1] ?? Number.NaN);
    const before = await read();
    countReturnedRow();
    countReturnedRow();
    expect(await read()).toBe(before + 2);
  });
});
