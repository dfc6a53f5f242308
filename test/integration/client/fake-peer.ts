/**
 * A throwaway HTTP peer on 127.0.0.1:0 for client tests: it records every request (method, URL,
 * headers, exact body bytes) and answers through a per-test handler.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  /** Path and query as received, e.g. `/v2/payments?limit=2`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type PeerHandler = (req: RecordedRequest, res: ServerResponse, index: number) => void;

export interface FakePeer {
  /** Base URL including `/v2`. */
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startFakePeer(handler: PeerHandler): Promise<FakePeer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const recorded = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(recorded);
      handler(recorded, res, requests.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v2`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        // Hanging requests (timeout tests) would keep close() waiting forever.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendError(
  res: ServerResponse,
  status: number,
  type: string,
  code: string,
  message = code,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { error: { type, code, message } }, headers);
}

const NOW = "2026-01-01T00:00:00Z";

/** A payment body that satisfies the wire-types `Payment` schema. */
export function paymentBody(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    status: "scheduled",
    deliveryPreference: "standard-ach",
    amount: 1250,
    currency: "USD",
    originatingAccountId: "acct_int1",
    receivingAccountId: "acct_ext1",
    fees: [],
    createdAt: NOW,
    updatedAt: NOW,
    ...extra,
  };
}
