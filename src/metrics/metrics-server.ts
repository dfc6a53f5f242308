/**
 * `/metrics` of `payouts worker` (METRICS_PORT): a bare node:http listener for Prometheus, on
 * 127.0.0.1 unless told otherwise (it carries no data beyond counts, and no secrets; put it behind
 * your scraper's network rules, not on a public address).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { PROMETHEUS_CONTENT_TYPE, type Registry, renderMetrics } from "./index.js";

export interface RunningMetricsServer {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(options: {
  port: number;
  host?: string;
  registries?: Registry[];
}): Promise<RunningMetricsServer> {
  const server = createServer((req, res) => {
    if ((req.url ?? "").split("?", 1)[0] !== "/metrics" || req.method !== "GET") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found: GET /metrics\n");
      return;
    }
    renderMetrics(...(options.registries ?? [])).then(
      (text) => res.writeHead(200, { "content-type": PROMETHEUS_CONTENT_TYPE }).end(text),
      () => res.writeHead(500, { "content-type": "text/plain" }).end("metrics unavailable\n"),
    );
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
