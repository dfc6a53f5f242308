/**
 * The yardstick of the pipeline benchmarks: C loops creating payments over one keep-alive undici
 * agent against a sandbox, with no queue and no Redis, so a ratio shows what the tool costs on top.
 */
import { randomUUID } from "node:crypto";
import { Agent, request } from "undici";

export interface PlainLoopRow {
  reference: string;
  rowKey: string;
  amount: number;
  currency: string;
  originatingAccountId: string;
  receivingAccountId: string;
  deliveryPreference: string;
  recipientNote?: string | undefined;
  metadata?: Record<string, string>;
}

export interface PlainLoopResult {
  created: number;
  failed: number;
  ms: number;
}

export async function plainCreateLoop(options: {
  url: string;
  apiKey: string;
  concurrency: number;
  count: number;
  row: (i: number) => PlainLoopRow;
}): Promise<PlainLoopResult> {
  const agent = new Agent({ connections: options.concurrency, keepAliveTimeout: 30_000 });
  let next = 0;
  let failed = 0;
  const t0 = performance.now();
  try {
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        for (let i = next++; i < options.count; i = next++) {
          const row = options.row(i);
          const res = await request(`${options.url}/payments`, {
            method: "POST",
            dispatcher: agent,
            headers: {
              "api-key": options.apiKey,
              "service-entity-id": "me",
              "idempotency-key": randomUUID(),
              "content-type": "application/json",
            },
            body: JSON.stringify({
              amount: row.amount,
              originatingAccountId: row.originatingAccountId,
              receivingAccountId: row.receivingAccountId,
              deliveryPreference: row.deliveryPreference,
              currency: row.currency,
              recipientNote: row.recipientNote,
              externalId: row.reference,
              metadata: {
                ...row.metadata,
                payouts_batch: "plain",
                payouts_row: row.rowKey,
                payouts_attempt: "1",
              },
            }),
          });
          await res.body.json();
          if (res.statusCode !== 201) failed++;
        }
      }),
    );
  } finally {
    await agent.close();
  }
  return { created: options.count - failed, failed, ms: performance.now() - t0 };
}
