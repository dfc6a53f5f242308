/**
 * One error root: every error the tool raises on purpose is a PayoutsError with a code and a kind,
 * and the kind alone decides the HTTP status and the exit code.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DuplicateFileError } from "../../../src/batches/index.js";
import { CliError, EXIT } from "../../../src/cli/exit-codes.js";
import { reportFailure } from "../../../src/cli/program.js";
import { ConfigError } from "../../../src/config/index.js";
import { exitCodeOf, httpStatusOf, PayoutsError } from "../../../src/errors/index.js";
import { PayoutsApiError } from "../../../src/payouts-api/index.js";
import { SheetReadError } from "../../../src/sheets/index.js";

const SRC = path.join(import.meta.dirname, "../../../src");

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    // The sandbox is another program (the service's stand-in) with its own errors.
    if (entry.isDirectory() && entry.name !== "sandbox") out.push(...(await sourceFiles(full)));
    else if (entry.name.endsWith(".ts")) out.push(full);
  }
  return out;
}

describe("the error root", () => {
  it("is the only class of the tool that extends Error itself", async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles(SRC)) {
      const text = await readFile(file, "utf8");
      for (const [, name] of text.matchAll(/class (\w+) extends Error\b/g)) {
        if (name !== "PayoutsError") offenders.push(`${path.relative(SRC, file)}: ${name}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("gives the errors a code and a kind", () => {
    expect(new DuplicateFileError("b1")).toMatchObject({ code: "DUPLICATE_FILE", kind: "conflict" });
    expect(new ConfigError("HTTP_PORT: bad")).toMatchObject({ code: "INVALID_SETTING", kind: "usage" });
    expect(new SheetReadError("EMPTY_FILE", "empty")).toMatchObject({
      code: "EMPTY_FILE",
      kind: "invalid-input",
    });
    const refused = new PayoutsApiError({
      status: 400,
      type: "invalid_request_error",
      code: "X",
      message: "m",
    });
    expect(refused).toBeInstanceOf(PayoutsError);
    expect(refused).toMatchObject({ code: "X", kind: "unavailable", name: "PayoutsApiError" });
  });

  it("maps each kind once to an HTTP status and an exit code", () => {
    expect(httpStatusOf("not-found")).toBe(404);
    expect(httpStatusOf("conflict")).toBe(409);
    expect(httpStatusOf("invalid-input")).toBe(422);
    expect(httpStatusOf("internal")).toBe(500);
    expect(exitCodeOf("invalid-input")).toBe(EXIT.inputProblems);
    expect(exitCodeOf("conflict")).toBe(EXIT.inputProblems);
    expect(exitCodeOf("usage")).toBe(EXIT.usage);
    expect(exitCodeOf("unavailable")).toBe(EXIT.usage);
  });

  it("ends a command with the error's own line and the exit code of its kind", () => {
    const written: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      expect(reportFailure(new SheetReadError("EMPTY_FILE", "sheet.csv: the file is empty"))).toBe(1);
      expect(reportFailure(new CliError("told", 2))).toBe(2);
      expect(reportFailure(new ConfigError("HTTP_PORT must be a number"))).toBe(2);
    } finally {
      process.stderr.write = write;
    }
    expect(written).toEqual([
      "payouts: sheet.csv: the file is empty\n",
      "payouts: told\n",
      "payouts: HTTP_PORT must be a number\n",
    ]);
  });
});
