/**
 * The parts a command may run. `payments` brings the shared rate limit, the result files (outbox)
 * and, with METRICS_PORT, the metrics server; `reconcile` runs only beside `payments` (it writes
 * through the same outbox and shares the rate).
 */
export type ServiceName = "payments" | "reconcile" | "approvals" | "watch" | "schedule" | "server";

/** What `payouts worker` runs. */
export const WORKER_SERVICES: readonly ServiceName[] = [
  "payments",
  "reconcile",
  "approvals",
  "watch",
  "schedule",
];
