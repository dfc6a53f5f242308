import { loadRestrictedSeed, type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BeneficialOwnerSet, Limitations } from "../../../src/payouts-api/wire-types.js";
import { call, createPayment, expectError } from "./helpers.js";

const US_OWNER = {
  firstName: "Ada",
  lastName: "Stone",
  dateOfBirth: "1980-01-02",
  address: { line1: "1 Main St", city: "Austin", state: "TX", postalCode: "78701", countryCode: "US" },
  usResident: true,
  types: ["ubo", "fx-account-holder"],
  ownershipPercentage: 0.5,
  jobTitle: "president",
  taxInfo: { type: "ssn", identifier: "123-45-6789" },
};
const DOC = {
  fileName: "passport.jpg",
  contentType: "image/jpeg",
  contentBase64: Buffer.from("jpeg-bytes").toString("base64"),
};
const EUR_PAYMENT = {
  amount: 10_000,
  originatingAccountId: "acct_globex_ops_checking",
  receivingAccountId: "acct_globex_supplier_eur",
  deliveryPreference: "international-fx",
  currency: "EUR",
};

const capability = (body: unknown, op: string) =>
  Limitations.parse(body).capabilities.find((c) => c.operation === op);

describe("default seed: fully onboarded", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox();
  });
  afterAll(() => sb.close());

  it("allows all four capabilities and has exactly one fx-account-holder", async () => {
    const lim = await call(sb, "GET", "/limitations");
    expect(lim.status).toBe(200);
    for (const op of [
      "payment.domestic:write",
      "payment.international:write",
      "account.internal:write",
      "account.external:write",
    ]) {
      expect(capability(lim.body, op)).toEqual({ operation: op, allowed: true, reasons: [] });
    }
    const owners = BeneficialOwnerSet.parse(
      (await call(sb, "GET", "/entities/me/beneficial-owners", { entity: null })).body,
    );
    expect(owners.data.filter((o) => o.types.includes("fx-account-holder"))).toHaveLength(1);
  });

  it("validates every replacement rule, naming the person and field", async () => {
    const put = (data: unknown[]) =>
      call(sb, "PUT", "/entities/me/beneficial-owners", { entity: null, body: { data } });
    const cases: [unknown[], string][] = [
      [[{ ...US_OWNER, types: ["ubo"] }], "data"], // no fx-account-holder
      [[US_OWNER, { ...US_OWNER, ownershipPercentage: 0.1 }], "data"], // two fx-account-holders
      [[{ ...US_OWNER, ownershipPercentage: undefined }], "data.0.ownershipPercentage"],
      [[US_OWNER, { ...US_OWNER, types: ["ubo"], ownershipPercentage: 0.6 }], "data"], // total 1.1
      [[{ ...US_OWNER, usResident: false }], "data.0.internationalId"],
      [[{ ...US_OWNER, address: { ...US_OWNER.address, line1: "PO Box 12" } }], "data.0.address.line1"],
      [[{ ...US_OWNER, id: 999 }], "data.0.id"],
      [[{ ...US_OWNER, frontAttachmentId: "att_nope" }], "data.0.frontAttachmentId"],
      [[{ ...US_OWNER, ownershipPercentage: 1.5 }], "data.0.ownershipPercentage"],
    ];
    for (const [data, path] of cases) {
      const res = await put(data);
      expectError(res, 400, "invalid_request_error", "VALIDATION_ERROR");
      expect(
        res.body.error.details.fields.map((f: { path: string }) => f.path),
        JSON.stringify(data),
      ).toContain(path);
    }
  });

  it("replaces the set by id, never returns full identifiers, and keeps write-only values", async () => {
    const current = BeneficialOwnerSet.parse(
      (await call(sb, "GET", `/entities/${sb.entityId}/beneficial-owners`, { entity: null })).body,
    );
    const keep = current.data.find((o) => o.types.includes("fx-account-holder"))!;
    const doc = await call(sb, "POST", "/attachments", { body: DOC });
    const foreign = {
      ...US_OWNER,
      firstName: "Marta",
      types: ["director"],
      ownershipPercentage: undefined,
      usResident: false,
      address: { line1: "Calle Mayor 3", city: "Madrid", state: "", postalCode: "28013", countryCode: "ES" },
      taxInfo: undefined,
      internationalIdType: "passport",
      internationalId: "PAX99887766",
      frontAttachmentId: doc.body.id,
    };
    const { createdAt: _c, updatedAt: _u, hasIdentityDocument: _h, taxInfo: _t, ...keepInput } = keep;
    const res = await call(sb, "PUT", "/entities/me/beneficial-owners", {
      entity: null,
      body: { data: [keepInput, foreign] },
    });
    expect(res.status).toBe(200);
    const set = BeneficialOwnerSet.parse(res.body);
    expect(set.data).toHaveLength(2); // Luis, not resent, was deleted
    expect(set.data[0]?.id).toBe(keep.id);
    expect(set.data[0]?.taxInfo).toEqual(keep.taxInfo); // kept though not resent
    const marta = set.data[1]!;
    expect(marta.id).toEqual(expect.any(Number));
    expect(marta.internationalId).toBe("7766");
    expect(marta.hasIdentityDocument).toBe(true);
    expect(JSON.stringify(res.body)).not.toContain("PAX99887766");
    expect(JSON.stringify(res.body)).not.toContain(doc.body.id);
    // Updating Marta without resending the passport number or document keeps them.
    const { createdAt: _c2, updatedAt: _u2, hasIdentityDocument: _h2, ...martaInput } = marta;
    const again = await call(sb, "PUT", "/entities/me/beneficial-owners", {
      entity: null,
      body: { data: [keepInput, { ...martaInput, internationalId: undefined }] },
    });
    expect(again.status).toBe(200);
    expect(again.body.data[1].internationalId).toBe("7766");
  });

  it("404s an unknown entity on the owner path", async () => {
    expectError(
      await call(sb, "GET", "/entities/ent_nope/beneficial-owners", { entity: null }),
      404,
      "not_found_error",
    );
  });
});

describe("restricted seed: outstanding limitations", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ seed: await loadRestrictedSeed() });
  });
  afterAll(() => sb.close());

  it("blocks international payments with MissingInformation until an fx-account-holder is recorded", async () => {
    const lim = await call(sb, "GET", "/limitations");
    const intl = capability(lim.body, "payment.international:write");
    expect(intl?.allowed).toBe(false);
    expect(intl?.reasons[0]?.code).toBe("MissingInformation");
    expect(intl?.reasons[0]?.missingFields.length).toBeGreaterThan(0);
    expect(capability(lim.body, "payment.domestic:write")?.allowed).toBe(true);
    expect((await call(sb, "GET", "/entities/me/beneficial-owners", { entity: null })).body).toEqual({
      data: [],
    });

    const blocked = await createPayment(sb, EUR_PAYMENT);
    expectError(blocked, 403, "authorization_error", "INTERNATIONAL_NOT_ENABLED");
    expect(blocked.body.error.message).toContain("MissingInformation");
    const domestic = await createPayment(sb, {
      amount: 1000,
      originatingAccountId: "acct_globex_ops_checking",
      receivingAccountId: "acct_globex_vendor_ach",
      deliveryPreference: "standard-ach",
    });
    expect(domestic.status).toBe(201);

    const put = await call(sb, "PUT", "/entities/me/beneficial-owners", {
      entity: null,
      body: { data: [US_OWNER] },
    });
    expect(put.status).toBe(200);
    expect(sb.state.events.map((e) => e.delivery.event)).toContain("api.limitation.updated");
    const after = await call(sb, "GET", "/limitations");
    expect(capability(after.body, "payment.international:write")).toMatchObject({
      allowed: true,
      reasons: [],
    });
    expect((await createPayment(sb, EUR_PAYMENT)).status).toBe(201);
  });
});

describe("sole proprietorship", () => {
  it("requires an identity document for every owner, US residents included", async () => {
    const seed = await loadRestrictedSeed();
    seed.entities[0]!.businessType = "sole-proprietorship";
    const sb = await startSandbox({ seed });
    try {
      const put = (data: unknown[]) =>
        call(sb, "PUT", "/entities/me/beneficial-owners", { entity: null, body: { data } });
      const missing = await put([US_OWNER]);
      expectError(missing, 400, "invalid_request_error", "VALIDATION_ERROR");
      expect(missing.body.error.details.fields[0].path).toBe("data.0.frontAttachmentId");
      const doc = await call(sb, "POST", "/attachments", { body: DOC });
      expect((await put([{ ...US_OWNER, frontAttachmentId: doc.body.id }])).status).toBe(200);
    } finally {
      await sb.close();
    }
  });
});
