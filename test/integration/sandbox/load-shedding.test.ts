/**
 * The sandbox sheds load as a service protecting its webhook pipeline would: while more deliveries
 * wait for the endpoint than its limit, new payments are answered 429 with Retry-After, and reads are
 * still answered; once the endpoint catches up, payments are accepted again.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACH_PAYMENT, call, createPayment, expectError, waitFor } from "./helpers.js";

describe("sandbox load shedding on a webhook backlog", () => {
  let sb: RunningSandbox;
  const held: ServerResponse<IncomingMessage>[] = [];
  // An endpoint that answers nothing until told to: deliveries pile up in the sandbox.
  const endpoint = createServer((req, res) => {
    req.resume();
    req.on("end", () => held.push(res));
  });
  beforeAll(async () => {
    await new Promise<void>((r) => endpoint.listen(0, "127.0.0.1", r));
    sb = await startSandbox({ clock: { toInProgressMs: 60_000, toFinalMs: 60_000 }, webhookBacklogLimit: 5 });
    const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hooks`;
    expect(
      (await call(sb, "PATCH", "/webhook", { body: { url, events: ["api.payment.created"] } })).status,
    ).toBe(200);
  });
  afterAll(async () => {
    await sb.close();
    endpoint.closeAllConnections();
    await new Promise((r) => endpoint.close(r));
  });

  it("refuses new payments with 429 while deliveries are behind, keeps answering reads, then accepts again", async () => {
    // 32 deliveries go out on the sandbox's connections (held by the endpoint), the next 5 may wait.
    const created: string[] = [];
    for (let i = 0; i < 37; i++) {
      const res = await createPayment(sb, ACH_PAYMENT);
      expect(res.status).toBe(201);
      created.push(res.body.id);
    }
    await waitFor(() => held.length === 32 || undefined);
    expect(sb.stats().webhooks).toEqual({ sending: 32, waiting: 5 });
    // At the limit a payment is still taken; beyond it, refused before anything is stored.
    expect((await createPayment(sb, ACH_PAYMENT)).status).toBe(201);
    const stored = sb.stats().payments.stored;
    const refused = await createPayment(sb, ACH_PAYMENT);
    expectError(refused, 429, "rate_limit_error", "RATE_LIMITED");
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(sb.stats().payments.stored).toBe(stored);
    expect(sb.stats().requests.rateLimited).toBeGreaterThanOrEqual(1);
    // Reads are not refused: a client can still reconcile what it paid.
    expect((await call(sb, "GET", `/payments/${created[0]}`)).status).toBe(200);

    // The endpoint catches up: payments are accepted again.
    await waitFor(() => {
      for (const res of held.splice(0)) res.writeHead(200).end();
      return sb.stats().webhooks.waiting === 0 || undefined;
    });
    expect((await createPayment(sb, ACH_PAYMENT)).status).toBe(201);
  });
});
