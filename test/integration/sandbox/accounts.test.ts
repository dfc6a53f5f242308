import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccountList } from "../../../src/payouts-api/wire-types.js";
import { call, expectError, waitFor } from "./helpers.js";

const VENDOR = {
  ownershipType: "external",
  type: "ach",
  counterPartyName: "Test Vendor",
  bankAccount: { accountType: "checking", routingNumber: "011000015", accountNumber: "9876543210" },
};

describe("sandbox accounts and pagination", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox();
  });
  afterAll(() => sb.close());

  it("lists the seeded accounts with their fixed externalIds, valid against the wire types", async () => {
    const res = await call(sb, "GET", "/accounts");
    expect(res.status).toBe(200);
    const list = AccountList.parse(res.body);
    const byExternalId = new Map(list.data.map((a) => [a.externalId, a]));
    for (const id of [
      "ops-checking",
      "payroll-unverified",
      "corporate-card",
      "vendor-ach",
      "vendor-ach-2",
      "vendor-check",
      "vendor-wire",
      "vendor-vcard",
      "payee-card",
      "supplier-eur",
      "supplier-gbp",
      "supplier-jpy",
      "supplier-mxn",
      "supplier-usd-intl",
      "contractor-gusd",
    ]) {
      expect(byExternalId.has(id), id).toBe(true);
    }
    expect(byExternalId.get("ops-checking")?.isVerified).toBe(true);
    expect(byExternalId.get("payroll-unverified")?.isVerified).toBe(false);
    expect(byExternalId.get("vendor-ach")?.isVerified).toBeUndefined();
    expect(byExternalId.get("supplier-eur")?.international?.currency).toBe("EUR");
  });

  it("creates an account, returning only the last four digits, and 409s a reused externalId", async () => {
    const created = await call(sb, "POST", "/accounts", { body: { ...VENDOR, externalId: "vendor-new" } });
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(/^acct_[0-9a-f]{24}$/);
    expect(created.body.bankAccount).toEqual({
      accountType: "checking",
      routingNumber: "011000015",
      accountNumberLast4: "3210",
    });
    expect(JSON.stringify(created.body)).not.toContain("9876543210");
    const fetched = await call(sb, "GET", `/accounts/${created.body.id}`);
    expect(fetched.body).toEqual(created.body);
    const dup = await call(sb, "POST", "/accounts", { body: { ...VENDOR, externalId: "vendor-new" } });
    expectError(dup, 409, "conflict_error", "DUPLICATE_EXTERNAL_ID");
  });

  it("refuses an account without the details its type needs", async () => {
    const res = await call(sb, "POST", "/accounts", {
      body: { ownershipType: "external", type: "domestic-wire" },
    });
    expectError(res, 400, "invalid_request_error", "VALIDATION_ERROR");
    expect(res.body.error.details.fields[0].path).toBe("wire");
  });

  it("filters by ownershipType, type, externalId and metadata", async () => {
    const internal = await call(sb, "GET", "/accounts?ownershipType=internal");
    expect(internal.body.data.map((a: { externalId: string }) => a.externalId).sort()).toEqual([
      "corporate-card",
      "ops-checking",
      "payroll-unverified",
    ]);
    const fx = await call(sb, "GET", "/accounts?type=international-fx&ownershipType=external");
    expect(fx.body.data).toHaveLength(5);
    const one = await call(sb, "GET", "/accounts?externalId=vendor-check");
    expect(one.body.data.map((a: { id: string }) => a.id)).toEqual(["acct_vendor_check"]);
    const meta = await call(sb, "GET", "/accounts?metadata[vendorNumber]=V-1002");
    expect(meta.body.data.map((a: { id: string }) => a.id)).toEqual(["acct_vendor_ach_2"]);
    expectError(await call(sb, "GET", "/accounts?type=bitcoin"), 400, "invalid_request_error");
  });

  it("filters on created[gte] / created[lte] inclusively", async () => {
    const a = await call(sb, "POST", "/accounts", { body: { ...VENDOR, metadata: { batch: "time" } } });
    const since = await call(
      sb,
      "GET",
      `/accounts?created[gte]=${encodeURIComponent(a.body.createdAt)}&metadata[batch]=time`,
    );
    expect(since.body.data.map((x: { id: string }) => x.id)).toEqual([a.body.id]);
    const before = await call(sb, "GET", "/accounts?created[lte]=2000-01-01T00:00:00Z");
    expect(before.body.data).toEqual([]);
    expectError(await call(sb, "GET", "/accounts?created[gte]=yesterday"), 400, "invalid_request_error");
  });

  it("pages newest first with startingAfter/endingBefore and hasMore, composing with filters", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call(sb, "POST", "/accounts", { body: { ...VENDOR, metadata: { page: "yes" } } });
      ids.push(r.body.id);
    }
    const newestFirst = [...ids].reverse();
    const p1 = await call(sb, "GET", "/accounts?limit=2&metadata[page]=yes");
    expect(p1.body.data.map((a: { id: string }) => a.id)).toEqual(newestFirst.slice(0, 2));
    expect(p1.body.hasMore).toBe(true);
    const p2 = await call(sb, "GET", `/accounts?limit=2&metadata[page]=yes&startingAfter=${newestFirst[1]}`);
    expect(p2.body.data.map((a: { id: string }) => a.id)).toEqual(newestFirst.slice(2, 4));
    expect(p2.body.hasMore).toBe(true);
    const p3 = await call(sb, "GET", `/accounts?limit=2&metadata[page]=yes&startingAfter=${newestFirst[3]}`);
    expect(p3.body.data.map((a: { id: string }) => a.id)).toEqual(newestFirst.slice(4));
    expect(p3.body.hasMore).toBe(false);
    const back = await call(sb, "GET", `/accounts?limit=2&metadata[page]=yes&endingBefore=${newestFirst[4]}`);
    expect(back.body.data.map((a: { id: string }) => a.id)).toEqual(newestFirst.slice(2, 4));
    expect(back.body.hasMore).toBe(true);
  });

  it("rejects bad pagination parameters with 400", async () => {
    for (const q of [
      "limit=0",
      "limit=51",
      "limit=abc",
      "startingAfter=acct_vendor_ach&endingBefore=acct_vendor_wire",
      "startingAfter=acct_nope",
    ]) {
      expectError(await call(sb, "GET", `/accounts?${q}`), 400, "invalid_request_error", "VALIDATION_ERROR");
    }
    expect((await call(sb, "GET", "/accounts?limit=50")).status).toBe(200);
  });

  it("updates and deletes an account, and refuses to delete one used by a live payment", async () => {
    const created = await call(sb, "POST", "/accounts", { body: VENDOR });
    const patched = await call(sb, "PATCH", `/accounts/${created.body.id}`, {
      body: { counterPartyName: "Renamed Vendor", metadata: { k: "v" } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.counterPartyName).toBe("Renamed Vendor");
    expect(patched.body.metadata).toEqual({ k: "v" });
    const deleted = await call(sb, "DELETE", `/accounts/${created.body.id}`);
    expect(deleted.status).toBe(200);
    expectError(await call(sb, "GET", `/accounts/${created.body.id}`), 404, "not_found_error");
    const events = sb.state.events.map((e) => e.delivery).filter((d) => d.id === created.body.id);
    expect(events.map((e) => e.event)).toEqual([
      "api.account.created",
      "api.account.updated",
      "api.account.deleted",
    ]);
    expect(events[0]?.data).toEqual({ ownershipType: "external", accountType: "ach" });
    expect(events[2]?.data).toEqual({ ownershipType: "external", accountType: "ach" });

    // A 77 amount stays scheduled, so the payee is in use.
    const payee = await call(sb, "POST", "/accounts", { body: VENDOR });
    const pay = await call(sb, "POST", "/payments", {
      idempotencyKey: "acct-in-use",
      body: {
        amount: 1077,
        originatingAccountId: "acct_ops_checking",
        receivingAccountId: payee.body.id,
        deliveryPreference: "standard-ach",
      },
    });
    expect(pay.status).toBe(201);
    expectError(
      await call(sb, "DELETE", `/accounts/${payee.body.id}`),
      409,
      "conflict_error",
      "ACCOUNT_IN_USE",
    );
  });

  it("verifies an internal bank account on listing once sandboxVerifyAfterMs has passed; the seed's stays unverified", async () => {
    const created = await call(sb, "POST", "/accounts", {
      body: {
        ownershipType: "internal",
        type: "ach",
        name: "New funding",
        bankAccount: { accountType: "checking", routingNumber: "021000021", accountNumber: "111122223333" },
        metadata: { sandboxVerifyAfterMs: "30" },
      },
    });
    expect(created.body.isVerified).toBe(false);
    const verified = await waitFor(async () => {
      const list = await call(sb, "GET", "/accounts?ownershipType=internal");
      const mine = list.body.data.find((a: { id: string }) => a.id === created.body.id);
      return mine.isVerified ? list : undefined;
    });
    const seeded = verified.body.data.find((a: { id: string }) => a.id === "acct_payroll_unverified");
    expect(seeded.isVerified).toBe(false);
    expect(
      sb.state.events.some(
        (e) => e.delivery.event === "api.account.updated" && e.delivery.id === created.body.id,
      ),
    ).toBe(true);
  });

  it("mints an account-link session URL", async () => {
    const res = await call(sb, "POST", "/accounts/link", { body: { ownershipType: "internal" } });
    expect(res.status).toBe(201);
    expect(res.body.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v2\/_sandbox\/account-link\?session=lnk_/);
    expect(Date.parse(res.body.expiresAt)).toBeGreaterThan(Date.now());
  });

  it("lists entities and supports minimal entity create/update/delete", async () => {
    const list = await call(sb, "GET", "/entities");
    expect(list.body.data.map((e: { externalId: string }) => e.externalId)).toEqual(["acme-corp"]);
    expect(list.body.data[0].businessType).not.toBe("sole-proprietorship");
    expect(list.body.hasMore).toBe(false);
    const created = await call(sb, "POST", "/entities", {
      body: { name: "Side Co", businessType: "llc", externalId: "side-co" },
    });
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(/^ent_/);
    // With two entities `me` is ambiguous.
    expectError(await call(sb, "GET", "/accounts", { entity: "me" }), 400, "invalid_request_error");
    const renamed = await call(sb, "PATCH", `/entities/${created.body.id}`, {
      body: { name: "Side Company" },
    });
    expect(renamed.body.name).toBe("Side Company");
    expect((await call(sb, "DELETE", `/entities/${created.body.id}`)).status).toBe(200);
    expect((await call(sb, "GET", "/accounts?limit=1", { entity: "me" })).status).toBe(200);
  });
});
