/** Who a command acts as: the account the process runs as, whatever $USER says. */
import { userInfo } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { cliIdentity } from "../../../src/approvals/index.js";
import { cliCaller } from "../../../src/gate/index.js";

const saved = { USER: process.env.USER, USERNAME: process.env.USERNAME };
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe("the CLI actor", () => {
  it("is cli:<os user> from the process's account, not from a $USER anyone can set", () => {
    process.env.USER = "approver-alice";
    process.env.USERNAME = "approver-alice";
    const expected = `cli:${userInfo().username}`;
    expect(cliIdentity()).toBe(expected);
    expect(cliCaller()).toEqual({ actor: { kind: "cli", name: expected }, from: "cli" });
  });
});
