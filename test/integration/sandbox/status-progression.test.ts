import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Payment } from "../../../src/payouts-api/wire-types.js";
import { ACH_PAYMENT, call, createPayment, waitFor } from "./helpers.js";

describe("sandbox payment status progression (short clock)", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ clock: { toInProgressMs: 20, toFinalMs: 20, toReturnMs: 40 } });
  });
  afterAll(() => sb.close());

  const settle = (id: string, status: string) =>
    waitFor(async () => {
      const res = await call(sb, "GET", `/payments/${id}`);
      return res.body.status === status ? Payment.parse(res.body) : undefined;
    });

  const statusEvents = (id: string) =>
    sb.state.events.filter((e) => e.delivery.id === id).map((e) => e.delivery.event);

  it("moves scheduled → in-progress → completed, recording fees at in-progress", async () => {
    const created = await createPayment(sb, ACH_PAYMENT);
    expect(created.body.fees).toEqual([]);
    const done = await settle(created.body.id, "completed");
    expect(done.fees).toEqual([{ type: "rail", amount: 25, currency: "USD", chargeTo: "originator" }]);
    expect(statusEvents(created.body.id)).toEqual([
      "api.payment.created",
      "api.payment.updated",
      "api.payment.updated",
    ]);
  });

  it("fails amounts ending in 13, keeping the fees", async () => {
    const created = await createPayment(sb, { ...ACH_PAYMENT, amount: 4513 });
    const failed = await settle(created.body.id, "failed");
    expect(failed.fees.length).toBeGreaterThan(0);
  });

  it("records a card processing fee on card-funded payments", async () => {
    const created = await createPayment(sb, {
      ...ACH_PAYMENT,
      amount: 10_000,
      originatingAccountId: "acct_corporate_card",
      deliveryPreference: "same-day-ach",
    });
    const done = await settle(created.body.id, "completed");
    expect(done.fees.map((f) => f.type)).toEqual(["rail", "card-processing"]);
    expect(done.fees[1]?.amount).toBe(290);
  });

  it("keeps amounts ending in 77 scheduled (under review) while others settle", async () => {
    const held = await createPayment(sb, { ...ACH_PAYMENT, amount: 1077 });
    const normal = await createPayment(sb, ACH_PAYMENT);
    await settle(normal.body.id, "completed");
    const still = await call(sb, "GET", `/payments/${held.body.id}`);
    expect(still.body.status).toBe("scheduled");
    expect(still.body.fees).toEqual([]);
    const list = await call(sb, "GET", "/payments?status=scheduled");
    expect(list.body.data.map((p: { id: string }) => p.id)).toContain(held.body.id);
  });

  it("refuses to cancel or edit a payment once it is no longer scheduled", async () => {
    const created = await createPayment(sb, ACH_PAYMENT);
    await settle(created.body.id, "completed");
    const cancel = await call(sb, "PATCH", `/payments/${created.body.id}`, { body: { status: "canceled" } });
    expect(cancel.status).toBe(409);
    expect(cancel.body.error.code).toBe("PAYMENT_NOT_CANCELABLE");
  });

  it("returns amounts ending in 555 after they completed: reported failed, with a reason and an event", async () => {
    const created = await createPayment(sb, { ...ACH_PAYMENT, amount: 12_555 });
    const completed = await settle(created.body.id, "completed");
    const returned = await settle(created.body.id, "failed");
    expect(returned.failureReason).toEqual({
      code: "R01",
      message: "insufficient funds: the receiving bank returned the payment",
    });
    expect(Date.parse(returned.updatedAt)).toBeGreaterThan(Date.parse(completed.updatedAt));
    expect(statusEvents(created.body.id)).toEqual([
      "api.payment.created",
      "api.payment.updated",
      "api.payment.updated",
      "api.payment.updated",
    ]);
    // Found under its new status by the list filters.
    const failed = await call(sb, "GET", "/payments?status=failed");
    expect(failed.body.data.map((p: { id: string }) => p.id)).toContain(created.body.id);
  });

  it("returns a completed payment on POST /_sandbox/payments/{id}/return, and refuses one that is not completed", async () => {
    const created = await createPayment(sb, ACH_PAYMENT);
    const held = await createPayment(sb, { ...ACH_PAYMENT, amount: 2077 });
    await settle(created.body.id, "completed");
    const refused = await call(sb, "POST", `/_sandbox/payments/${held.body.id}/return`, { body: {} });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("PAYMENT_NOT_RETURNABLE");
    const answer = await call(sb, "POST", `/_sandbox/payments/${created.body.id}/return`, {
      body: { status: "canceled", reason: { code: "R10", message: "customer advises not authorized" } },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: created.body.id,
      status: "canceled",
      failureReason: { code: "R10", message: "customer advises not authorized" },
    });
    const listed = await call(sb, "GET", "/payments?status=canceled");
    expect(listed.body.data.map((p: { id: string }) => p.id)).toContain(created.body.id);
    expect((await call(sb, "POST", "/_sandbox/payments/pay_nope/return", { body: {} })).status).toBe(404);
  });
});
