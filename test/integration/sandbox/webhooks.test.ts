import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WebhookDelivery, WebhookEndpoint } from "../../../src/payouts-api/wire-types.js";
import { ACH_PAYMENT, call, createPayment, expectError, waitFor } from "./helpers.js";

interface Received {
  raw: Buffer;
  headers: Record<string, string | string[] | undefined>;
}

/** A local receiver that answers the statuses in `script` in turn, then 200. */
async function startReceiver(): Promise<{
  url: string;
  received: Received[];
  script: number[];
  server: Server;
}> {
  const received: Received[] = [];
  const script: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ raw: Buffer.concat(chunks), headers: req.headers });
      res.writeHead(script.shift() ?? 200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    script,
    server,
  };
}

const parse = (r: Received) => WebhookDelivery.parse(JSON.parse(r.raw.toString("utf8")));

describe("sandbox webhooks", () => {
  let sb: RunningSandbox;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    sb = await startSandbox({
      clock: { toInProgressMs: 60_000, toFinalMs: 60_000 },
      webhookRetry: { attempts: 3, baseDelayMs: 10 },
    });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await sb.close();
    receiver.server.closeAllConnections();
    await new Promise((r) => receiver.server.close(r));
  });
  afterEach(() => {
    receiver.received.length = 0;
    receiver.script.length = 0;
  });

  it("404s GET /webhook before configuration and requires url + events the first time", async () => {
    expectError(await call(sb, "GET", "/webhook"), 404, "not_found_error");
    expectError(
      await call(sb, "PATCH", "/webhook", { body: { url: receiver.url } }),
      400,
      "invalid_request_error",
      "VALIDATION_ERROR",
    );
    expectError(
      await call(sb, "PATCH", "/webhook", {
        body: { url: "http://example.com/hook", events: ["api.payment.created"] },
      }),
      400,
      "invalid_request_error",
      "VALIDATION_ERROR",
    );
  });

  it("configures the endpoint (http allowed to loopback only) and lists event types", async () => {
    const res = await call(sb, "PATCH", "/webhook", {
      body: {
        url: receiver.url,
        events: ["api.payment.created", "api.account.created"],
        description: "tests",
      },
    });
    expect(res.status).toBe(200);
    expect(WebhookEndpoint.parse(res.body)).toMatchObject({ url: receiver.url, isActive: true });
    const events = await call(sb, "GET", "/webhook/events");
    expect(events.body.data).toHaveLength(8);
  });

  it("delivers subscribed events signed with the API key over the raw body", async () => {
    const p = await createPayment(sb, { ...ACH_PAYMENT, externalId: "wh-1", metadata: { batch: "wh" } });
    const got = await waitFor(() => receiver.received[0]);
    const expected = createHmac("sha256", sb.apiKey).update(got.raw).digest("hex");
    expect(got.headers["x-service-signature"]).toBe(expected);
    expect(got.headers["content-type"]).toBe("application/json");
    const delivery = parse(got);
    expect(got.headers["x-service-delivery-id"]).toBe(delivery.messageId);
    expect(delivery).toMatchObject({
      event: "api.payment.created",
      id: p.body.id,
      entityId: sb.entityId,
      externalId: "wh-1",
      entityExternalId: "acme-corp",
      metadata: { batch: "wh" },
    });
  });

  it("sends only subscribed events (no api.payment.updated here)", async () => {
    const p = await createPayment(sb, { ...ACH_PAYMENT, amount: 1077 });
    await call(sb, "PATCH", `/payments/${p.body.id}`, { body: { payerMemo: "edited" } });
    const acct = await call(sb, "POST", "/accounts", {
      body: {
        ownershipType: "external",
        type: "virtual-card",
        counterPartyName: "X",
        card: { number: "4000056655665556" },
      },
    });
    await waitFor(() => (receiver.received.length >= 2 ? true : undefined));
    const events = receiver.received.map((r) => parse(r));
    expect(events.map((e) => e.event)).toEqual(["api.payment.created", "api.account.created"]);
    expect(events[1]?.data).toEqual({ ownershipType: "external", accountType: "virtual-card" });
    expect(events[1]?.id).toBe(acct.body.id);
  });

  it("retries a failing delivery with the same messageId until it succeeds", async () => {
    receiver.script.push(500, 503);
    await createPayment(sb, ACH_PAYMENT);
    await waitFor(() => (receiver.received.length >= 3 ? true : undefined));
    const ids = receiver.received.map((r) => parse(r).messageId);
    expect(new Set(ids).size).toBe(1);
    expect(receiver.received.map((r) => r.headers["x-service-delivery-id"])).toEqual(ids);
  });

  it("gives up after the configured attempts", async () => {
    receiver.script.push(500, 500, 500);
    await createPayment(sb, ACH_PAYMENT);
    await waitFor(() => (receiver.received.length >= 3 ? true : undefined));
    // A later event arrives on its own; the given-up one is not sent a fourth time.
    await createPayment(sb, { ...ACH_PAYMENT, externalId: "after-give-up" });
    const later = await waitFor(() => receiver.received.find((r) => parse(r).externalId === "after-give-up"));
    expect(receiver.received.indexOf(later)).toBe(3);
  });

  it("sends nothing while isActive is false, and resumes after", async () => {
    const paused = await call(sb, "PATCH", "/webhook", {
      key: null,
      headers: { authorization: `Bearer ${sb.apiKey}` },
      body: { isActive: false },
    });
    expect(paused.body.isActive).toBe(false);
    await createPayment(sb, { ...ACH_PAYMENT, externalId: "while-paused" });
    await call(sb, "PATCH", "/webhook", { body: { isActive: true } });
    await createPayment(sb, { ...ACH_PAYMENT, externalId: "after-resume" });
    await waitFor(() => receiver.received.find((r) => parse(r).externalId === "after-resume"));
    expect(receiver.received.map((r) => parse(r).externalId)).toEqual(["after-resume"]);
  });

  it("replaces the event list and stops deliveries after DELETE", async () => {
    const res = await call(sb, "PATCH", "/webhook", { body: { events: ["api.payment.updated"] } });
    expect(res.body.events).toEqual(["api.payment.updated"]);
    const p = await createPayment(sb, { ...ACH_PAYMENT, amount: 2077 });
    await call(sb, "PATCH", `/payments/${p.body.id}`, { body: { status: "canceled" } });
    const got = await waitFor(() => receiver.received[0]);
    expect(parse(got)).toMatchObject({ event: "api.payment.updated", id: p.body.id });
    expect((await call(sb, "DELETE", "/webhook")).status).toBe(200);
    expectError(await call(sb, "GET", "/webhook"), 404, "not_found_error");
  });
});
