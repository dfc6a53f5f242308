/** A few counters for `GET /metrics`, in the Prometheus text format (no client library needed). */

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
  private readonly deliveries = new Map<DeliveryOutcome, number>(DELIVERY_OUTCOMES.map((o) => [o, 0]));
  private readonly startedAt = Date.now();

  countDelivery(outcome: DeliveryOutcome): void {
    this.deliveries.set(outcome, (this.deliveries.get(outcome) ?? 0) + 1);
  }

  deliveryCount(outcome: DeliveryOutcome): number {
    return this.deliveries.get(outcome) ?? 0;
  }

  render(): string {
    const lines = [
      "# HELP payouts_webhook_deliveries_total Webhook deliveries received, by what was done with them.",
      "# TYPE payouts_webhook_deliveries_total counter",
      ...[...this.deliveries].map(([o, n]) => `payouts_webhook_deliveries_total{outcome="${o}"} ${n}`),
      "# HELP payouts_server_uptime_seconds Seconds since the server started.",
      "# TYPE payouts_server_uptime_seconds gauge",
      `payouts_server_uptime_seconds ${Math.round((Date.now() - this.startedAt) / 1000)}`,
    ];
    return `${lines.join("\n")}\n`;
  }
}
