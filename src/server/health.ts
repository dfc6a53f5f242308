/**
 * `GET /healthz`: Redis answers PING and the Payouts Service answers an authenticated read, each
 * within a short timeout. 200 when both do, else 503; the JSON names each check and, on failure, an
 * error code only (never a message that could carry a URL with credentials, a key or a body).
 */
import { setTimeout as sleep } from "node:timers/promises";

export type HealthCheck = (signal: AbortSignal) => Promise<unknown>;

export interface HealthReport {
  status: "ok" | "unavailable";
  checks: Record<string, { ok: boolean; ms: number; error?: string }>;
}

export const DEFAULT_HEALTH_TIMEOUT_MS = 2_000;

function errorCode(err: unknown): string {
  if (err && typeof err === "object") {
    const { code, name } = err as { code?: unknown; name?: unknown };
    if (typeof code === "string" && /^[A-Za-z0-9_.-]{1,64}$/.test(code)) return code;
    if (typeof name === "string") return name;
  }
  return "ERROR";
}

export async function runHealthChecks(
  checks: Record<string, HealthCheck>,
  timeoutMs = DEFAULT_HEALTH_TIMEOUT_MS,
): Promise<HealthReport> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      const started = performance.now();
      const controller = new AbortController();
      const timer = sleep(timeoutMs, "timeout", { ref: false, signal: controller.signal }).catch(
        () => undefined,
      );
      try {
        const outcome = await Promise.race([check(controller.signal).then(() => "ok" as const), timer]);
        const ms = Math.round(performance.now() - started);
        return [name, outcome === "ok" ? { ok: true, ms } : { ok: false, ms, error: "TIMEOUT" }] as const;
      } catch (err) {
        return [
          name,
          { ok: false, ms: Math.round(performance.now() - started), error: errorCode(err) },
        ] as const;
      } finally {
        controller.abort();
      }
    }),
  );
  const report: HealthReport = { status: "ok", checks: Object.fromEntries(entries) };
  if (entries.some(([, r]) => !r.ok)) report.status = "unavailable";
  return report;
}
