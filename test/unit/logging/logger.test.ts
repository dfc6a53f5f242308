import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, redactSecrets, redactSecretsDeep } from "../../../src/logging/index.js";

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
