import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/index.js";

describe("loadConfig", () => {
  it("applies the documented defaults when nothing is set", () => {
    const c = loadConfig({});
    expect(c.entityId).toBe("me");
    expect(c.redisUrl).toBe("redis://127.0.0.1:6379");
    expect(c.dataDir).toBe(path.resolve("./data"));
    expect(c.httpPort).toBe(3000);
    expect(c.logLevel).toBe("info");
    expect(c.apiUrl).toBeUndefined();
    expect(c.uploadKeep).toEqual({ openSeconds: 24 * 3600, submittedSeconds: 7 * 86_400 });
  });

  it("reads how long uploads are kept, and refuses zero hours naming the variable", () => {
    const c = loadConfig({ UPLOAD_KEEP_HOURS: "2", UPLOAD_KEEP_SUBMITTED_DAYS: "30" });
    expect(c.uploadKeep).toEqual({ openSeconds: 2 * 3600, submittedSeconds: 30 * 86_400 });
    expect(() => loadConfig({ UPLOAD_KEEP_HOURS: "0" })).toThrow(/UPLOAD_KEEP_HOURS/);
  });

  it("defaults the webhook secret to the API key, as the spec signs with the key", () => {
    expect(loadConfig({ PAYOUTS_API_KEY: "k1" }).webhookSecret).toBe("k1");
    expect(loadConfig({ PAYOUTS_API_KEY: "k1", PAYOUTS_WEBHOOK_SECRET: "s2" }).webhookSecret).toBe("s2");
  });

  it("treats blank values as unset and trims a trailing slash from the API URL", () => {
    const c = loadConfig({ HTTP_PORT: "  ", PAYOUTS_API_URL: "http://127.0.0.1:8080/v2/" });
    expect(c.httpPort).toBe(3000);
    expect(c.apiUrl).toBe("http://127.0.0.1:8080/v2");
  });

  it("names every bad variable in one error", () => {
    let err: unknown;
    try {
      loadConfig({ HTTP_PORT: "70000", REDIS_URL: "not a url", LOG_LEVEL: "loud" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toContain("HTTP_PORT");
    expect(msg).toContain("REDIS_URL");
    expect(msg).toContain("LOG_LEVEL");
  });

  it("never echoes a secret's value in its error", () => {
    const secret = "sk_live_do_not_print_me";
    try {
      loadConfig({ PAYOUTS_API_KEY: secret, PAYOUTS_ENTITY_ID: "bogus entity" });
      expect.unreachable();
    } catch (e) {
      expect((e as Error).message).toContain("PAYOUTS_ENTITY_ID");
      expect((e as Error).message).not.toContain(secret);
    }
  });

  it("refuses a schedule that cannot fire, naming the variable", () => {
    expect(() => loadConfig({ SCHEDULE_CRON: "bogus cron" })).toThrow(
      /SCHEDULE_CRON: "bogus cron" is not a cron pattern/,
    );
    expect(() => loadConfig({ SCHEDULE_CRON: "0 2 * * *", SCHEDULE_TZ: "Mars/Base" })).toThrow(/SCHEDULE_TZ/);
    const ok = loadConfig({ SCHEDULE_CRON: "0 2 * * *", SCHEDULE_TZ: "Europe/Paris" });
    expect(ok).toMatchObject({ scheduleCron: "0 2 * * *", scheduleTz: "Europe/Paris" });
  });
});

describe("the feed and duplicate windows", () => {
  it("are read with the rest, blank meaning the default", () => {
    expect(loadConfig({}).feedWindow).toBe(2000);
    expect(loadConfig({ PAYOUTS_FEED_WINDOW: " " }).feedWindow).toBe(2000);
    expect(loadConfig({ PAYOUTS_FEED_WINDOW: "500" }).feedWindow).toBe(500);
    expect(loadConfig({}).duplicateWindowDays).toBe(30);
    expect(loadConfig({ PAYOUTS_DUPLICATE_WINDOW_DAYS: "0" }).duplicateWindowDays).toBe(0);
  });

  it("refuse a value out of range, naming the variable", () => {
    for (const bad of ["0", "-3", "2.5", "lots"]) {
      expect(() => loadConfig({ PAYOUTS_FEED_WINDOW: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ PAYOUTS_FEED_WINDOW: bad })).toThrow(/PAYOUTS_FEED_WINDOW/);
    }
    expect(() => loadConfig({ PAYOUTS_DUPLICATE_WINDOW_DAYS: "-1" })).toThrow(
      /PAYOUTS_DUPLICATE_WINDOW_DAYS/,
    );
  });

  it("knows whether REDIS_URL was set (the demo starts its own Redis when not)", () => {
    expect(loadConfig({}).redisUrlGiven).toBe(false);
    expect(loadConfig({ REDIS_URL: " " }).redisUrlGiven).toBe(false);
    expect(loadConfig({ REDIS_URL: "redis://127.0.0.1:6390" }).redisUrlGiven).toBe(true);
  });
});
