import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, expectError } from "./helpers.js";

describe("sandbox authentication, entity header and error envelope", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox();
  });
  afterAll(() => sb.close());

  it("announces itself as a sandbox under /v2 with the demo key", () => {
    expect(sb.sandbox).toBe(true);
    expect(sb.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v2$/);
    expect(sb.apiKey).toBe("sk_sandbox_demo_key");
    expect(sb.entityId).toMatch(/^ent_/);
  });

  it("answers 401 UNAUTHORIZED without a key or with an unknown key", async () => {
    expectError(
      await call(sb, "GET", "/accounts", { key: null }),
      401,
      "authentication_error",
      "UNAUTHORIZED",
    );
    expectError(
      await call(sb, "GET", "/accounts", { key: "sk_nope" }),
      401,
      "authentication_error",
      "UNAUTHORIZED",
    );
  });

  it("answers 401 NO_ACTIVE_API_KEY for a revoked key", async () => {
    const res = await call(sb, "GET", "/accounts", { key: "sk_sandbox_revoked_key" });
    expectError(res, 401, "authentication_error", "NO_ACTIVE_API_KEY");
  });

  it("does not accept a bearer header outside /webhook", async () => {
    const res = await call(sb, "GET", "/accounts", {
      key: null,
      headers: { authorization: `Bearer ${sb.apiKey}` },
    });
    expectError(res, 401, "authentication_error", "UNAUTHORIZED");
  });

  it("accepts api-key or a bearer header on /webhook*", async () => {
    const bearer = await call(sb, "GET", "/webhook/events", {
      key: null,
      headers: { authorization: `Bearer ${sb.apiKey}` },
    });
    expect(bearer.status).toBe(200);
    expect(bearer.body.data).toContain("api.payment.updated");
    expect((await call(sb, "GET", "/webhook/events")).status).toBe(200);
  });

  it("requires the entity header on entity-scoped endpoints", async () => {
    for (const path of ["/accounts", "/payments", "/limitations"]) {
      expectError(
        await call(sb, "GET", path, { entity: null }),
        400,
        "invalid_request_error",
        "VALIDATION_ERROR",
      );
    }
    const tool = await call(sb, "POST", "/tools/fee-calculator", { entity: null, body: {} });
    expectError(tool, 400, "invalid_request_error");
    const att = await call(sb, "POST", "/attachments", { entity: null, body: {} });
    expectError(att, 400, "invalid_request_error");
  });

  it("resolves `me` and the explicit entity id, and 404s an unknown entity", async () => {
    const me = await call(sb, "GET", "/accounts?limit=1", { entity: "me" });
    const explicit = await call(sb, "GET", "/accounts?limit=1", { entity: sb.entityId });
    expect(me.status).toBe(200);
    expect(explicit.body).toEqual(me.body);
    expectError(
      await call(sb, "GET", "/accounts", { entity: "ent_unknown" }),
      404,
      "not_found_error",
      "NOT_FOUND",
    );
  });

  it("uses the error envelope for unknown routes and malformed JSON", async () => {
    expectError(await call(sb, "GET", "/no-such-thing"), 404, "not_found_error", "NOT_FOUND");
    expectError(await call(sb, "GET", "/payments/pay_missing"), 404, "not_found_error", "NOT_FOUND");
    const bad = await call(sb, "POST", "/accounts", { rawBody: "{not json" });
    expectError(bad, 400, "invalid_request_error", "VALIDATION_ERROR");
    expect(bad.body.error.details.fields[0].path).toBe("body");
  });

  it("reports zod field details on validation failures", async () => {
    const res = await call(sb, "POST", "/accounts", { body: { ownershipType: "sideways", type: "ach" } });
    expectError(res, 400, "invalid_request_error", "VALIDATION_ERROR");
    expect(res.body.error.details.fields).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: "ownershipType" })]),
    );
  });
});
