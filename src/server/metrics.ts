/**
 * The server's own metrics, in a registry per server (so two servers in one process, as in tests,
 * count apart): webhook deliveries by outcome and request latency by route. `/metrics` renders these
 * after the process-wide ones of src/metrics.
 */
import { Counter, Histogram, Registry, renderMetrics } from "../metrics/index.js";

export const DELIVERY_OUTCOMES = [
  "queued",
  "duplicate",
  "ignored",
  "unauthorized",
  "invalid",
  "too_large",
  "unavailable",
] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly deliveries = new Counter({
    name: "payouts_webhook_deliveries_total",
    help: "Webhook deliveries received, by what was done with them.",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  private readonly requests = new Histogram({
    name: "payouts_http_request_duration_seconds",
    help: "Requests to this server by method, route pattern and status.",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });
  private readonly counts = new Map<DeliveryOutcome, number>();

  constructor() {
    // Every outcome shows from the start (a 0 is an answer; a missing series is not).
    for (const o of DELIVERY_OUTCOMES) this.deliveries.inc({ outcome: o }, 0);
  }

  countDelivery(outcome: DeliveryOutcome): void {
    this.deliveries.inc({ outcome });
    this.counts.set(outcome, (this.counts.get(outcome) ?? 0) + 1);
  }

  deliveryCount(outcome: DeliveryOutcome): number {
    return this.counts.get(outcome) ?? 0;
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.observe({ method, route, status: String(status) }, seconds);
  }

  render(): Promise<string> {
    return renderMetrics(this.registry);
  }
}
