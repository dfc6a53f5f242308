import { Writable } from "node:stream";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { configSecrets, createLogger, redactSecrets, redactSecretsDeep } from "../../../src/logging/index.js";
import { connectionErrorFrom, PayoutsApiError } from "../../../src/payouts-api/errors.js";
import { REDIS_URL } from "../../integration/pipeline/helpers.js";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString("utf8"));
      done();
    },
  });
  return { lines, destination, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe("createLogger", () => {
  it("censors secret fields at the top level and nested", () => {
    const { destination, lines, records } = capture();
    const logger = createLogger({ level: "info", name: "t", destination });
    logger.info(
      {
        apiKey: "k1-secret",
        headers: { "api-key": "k2-secret", authorization: "Bearer k3-secret", accept: "json" },
        webhook: { secret: "k4-secret", signature: "k5-secret" },
        row: { account: { bankAccount: { accountNumber: "000123456789" } }, iban: "DE89370400440532013000" },
        payee: { card: { number: "4111111111111111" } },
        owner: { taxInfo: { identifier: "123-45-6789" } },
        amount: 1250,
      },
      "hello",
    );
    const text = lines.join("");
    for (const secret of ["k1-secret", "k2-secret", "k3-secret", "k4-secret", "k5-secret", "000123456789"]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toContain("DE89370400440532013000");
    expect(text).not.toContain("4111111111111111");
    expect(text).not.toContain("123-45-6789");
    const [record] = records();
    expect(record).toMatchObject({ name: "t", msg: "hello", amount: 1250, headers: { accept: "json" } });
  });

  it("writes nothing below its level", () => {
    const { destination, lines } = capture();
    const logger = createLogger({ level: "warn", destination });
    logger.info("quiet");
    logger.warn("loud");
    expect(lines).toHaveLength(1);
  });
});

describe("an error logged as { err }", () => {
  /** The whole line each error writes, stack and causes included, and the record read back. */
  function logged(err: unknown, secrets: string[] = []): { text: string; record: Record<string, unknown> } {
    const { destination, lines, records } = capture();
    const logger = createLogger({ destination, secrets });
    logger.error({ err }, "failed");
    logger.child({ batchId: "b1" }).warn(err as object, "failed again");
    return { text: lines.join(""), record: records()[0]! };
  }

  it("never shows the Redis password an ioredis AUTH refusal carries in its command", async () => {
    const url = new URL(REDIS_URL);
    url.username = "no-such-user";
    url.password = "redis-pw-4e1f";
    const redis = new Redis(url.toString(), {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    const refusal = await new Promise<Error>((resolve) => {
      redis.once("error", resolve);
      redis.connect().catch(() => undefined);
    });
    redis.disconnect();
    expect(refusal.message).toMatch(/WRONGPASS/);
    const { text, record } = logged(refusal);
    expect(text).not.toContain("redis-pw-4e1f");
    expect(record.err).toMatchObject({
      message: expect.stringMatching(/WRONGPASS/),
      command: { name: "auth" },
    });
  });

  it("never shows a password inside a URL, in the message or a cause's message and stack", () => {
    const cause = new Error("connect ECONNREFUSED via redis://:redis-pw-77aa@cache.internal:6379/0");
    const err = new Error("Redis unreachable at rediss://ops:redis-pw-77ab@cache.internal:6380", { cause });
    const { text, record } = logged(err);
    expect(text).not.toContain("redis-pw-77aa");
    expect(text).not.toContain("redis-pw-77ab");
    expect(String((record.err as { message: string }).message)).toContain(
      "rediss://ops:[REDACTED]@cache.internal",
    );
  });

  it("never shows an API key a service error carries in headers or details, however deep", () => {
    const transport = Object.assign(new Error("socket hang up (request had api-key: sk_live_9f3c2a)"), {
      code: "ECONNRESET",
      headers: { "API-Key": "sk_live_9f3c2a", Authorization: "Bearer sk_live_9f3c2a" },
    });
    const wrapped = connectionErrorFrom(transport, "POST /payments");
    const refused = new PayoutsApiError({
      status: 400,
      type: "invalid_request_error",
      code: "VALIDATION_ERROR",
      message: "bad request",
      details: { echo: { request: { headers: { authorization: "Basic c2tfbGl2ZV85ZjNjMmE6" } } } },
      cause: wrapped,
    });
    for (const err of [wrapped, refused]) {
      const { text } = logged(err);
      expect(text).not.toContain("sk_live_9f3c2a");
      expect(text).not.toContain("c2tfbGl2ZV85ZjNjMmE6");
    }
    expect(logged(refused).record.err).toMatchObject({ code: "VALIDATION_ERROR", status: 400 });
  });

  it("never shows a known secret value (the API key, the webhook secret) wherever it appears", () => {
    const webhookSecret = "whsec_5b2d9e0c41";
    const apiKey = "key+with/odd=chars";
    const cause = new Error(`HMAC keyed with ${webhookSecret} did not match`);
    const err = Object.assign(
      new Error(`request to https://api.example/v2?k=${encodeURIComponent(apiKey)} failed`, { cause }),
      {
        context: { note: `secret was ${webhookSecret}`, list: [[[[{ deep: apiKey }]]]] },
      },
    );
    const { text } = logged(err, [webhookSecret, apiKey]);
    expect(text).not.toContain(webhookSecret);
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain(encodeURIComponent(apiKey));
  });
});

describe("configSecrets", () => {
  it("names the settings' secret values, REDIS_URL's password decoded, for the logger to keep out", () => {
    const secrets = configSecrets({
      apiKey: "sk_test_0a1b",
      webhookSecret: "whsec_2c3d",
      token: "pat_4e5f",
      redisUrl: "redis://ops:p%40ss-6a7b@cache:6379",
    });
    expect(secrets).toEqual(["sk_test_0a1b", "whsec_2c3d", "pat_4e5f", "p@ss-6a7b"]);
    const { destination, lines } = capture();
    createLogger({ destination, secrets }).error({ err: new Error("AUTH p@ss-6a7b refused") }, "x");
    expect(lines.join("")).not.toContain("p@ss-6a7b");
  });
});

describe("redactSecrets", () => {
  it("replaces every occurrence of each secret, including its URL-encoded form", () => {
    const secret = "sk/abc+def=1";
    const text = `key=${secret} again ${secret} url=${encodeURIComponent(secret)}`;
    expect(redactSecrets(text, [secret])).toBe("key=[REDACTED] again [REDACTED] url=[REDACTED]");
  });

  it("ignores empty and tiny secrets instead of shredding the text", () => {
    expect(redactSecrets("a b c", ["", undefined, "a"])).toBe("a b c");
  });

  it("redacts inside nested values without touching the input", () => {
    const input = { list: ["x sk_test_1234 y"], n: 1 };
    expect(redactSecretsDeep(input, ["sk_test_1234"])).toEqual({ list: ["x [REDACTED] y"], n: 1 });
    expect(input.list[0]).toBe("x sk_test_1234 y");
  });
});
