import { describe, expect, it } from "vitest";
import { environmentFailure, isRedisOutOfMemory } from "../../../src/cli/exit-codes.js";

function errno(code: string, syscall?: string, path?: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`${code}: something`);
  err.code = code;
  if (syscall) err.syscall = syscall;
  if (path) err.path = path;
  return err;
}

describe("environmentFailure: the one line of a failure that is the environment's", () => {
  it("Redis at its maxmemory says so and what to do", () => {
    const oom = Object.assign(new Error("OOM command not allowed when used memory > 'maxmemory'."), {
      name: "ReplyError",
    });
    expect(isRedisOutOfMemory(oom)).toBe(true);
    expect(environmentFailure(oom)).toMatch(/out of memory .*raise maxmemory or free memory/);
  });

  it("a full disk names the file and says to free space", () => {
    expect(environmentFailure(errno("ENOSPC", "write", "/data/archive/x.ndjson"))).toBe(
      "cannot write /data/archive/x.ndjson: no space left on the device (ENOSPC); what this command did " +
        "after that was not kept: run it again once you free some space (DATA_DIR and the folders it writes)",
    );
  });

  it("looks through a cause chain", () => {
    const wrapped = new Error("archiving failed", { cause: errno("EROFS", "open", "/data/x") });
    expect(environmentFailure(wrapped)).toMatch(/^cannot open \/data\/x: the file system is read-only/);
  });

  it("another Redis refusal is named as Redis's", () => {
    const readonly = Object.assign(new Error("READONLY You can't write against a read only replica."), {
      name: "ReplyError",
    });
    expect(environmentFailure(readonly)).toMatch(/^Redis at REDIS_URL refused a command: READONLY/);
  });

  it("a bug is not the environment's: undefined, so its stack is printed", () => {
    expect(environmentFailure(new TypeError("x is undefined"))).toBeUndefined();
    expect(environmentFailure(errno("ENOSPC"))).toBeUndefined(); // no syscall: not a file operation
  });
});
