/** Option parsers shared by commands; each names the flag in its error so the user knows what to fix. */
import { type Command, InvalidArgumentError, Option } from "commander";
import { DEFAULT_KEY_PREFIX } from "../batches/index.js";
import { type DeclaredTotals, declaredTotalsOf, parseDeclaredTotal } from "../intake/index.js";
import { CliError, EXIT } from "./exit-codes.js";

export function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError("expected a port number 0-65535");
  return n;
}

export function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError("expected a whole number of 1 or more");
  return n;
}

/**
 * The `--redis-prefix` option every command that reads or writes the working state in Redis takes,
 * defaulting to the prefix the batch store uses: `command.addOption(redisPrefixOption())`. One
 * definition, so the flag, its help and its default cannot differ between commands.
 */
export function redisPrefixOption(): Option {
  return new Option("--redis-prefix <prefix>", "key prefix of the working state in Redis").default(
    DEFAULT_KEY_PREFIX,
  );
}

/** The flags of declared control totals, as `submit` and `validate` take them. */
export interface ExpectFlags {
  expectRows?: number;
  expectTotal?: string[];
}

/**
 * Adds `--expect-rows N` and `--expect-total CUR:amount` (repeatable, one per currency): totals the
 * person submitting vouches for, checked against the sheet's valid rows before anything is paid.
 */
export function addExpectOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        "--expect-rows <n>",
        "refuse the sheet unless it has exactly this many valid rows",
      ).argParser((value: string) => {
        if (!/^\d+$/.test(value)) throw new InvalidArgumentError("expected a whole number of rows");
        return Number(value);
      }),
    )
    .addOption(
      new Option(
        "--expect-total <CUR:amount>",
        "refuse the sheet unless its valid rows in CUR add up to amount (e.g. USD:125000.00); repeat per currency",
      ).argParser((value: string, previous: string[] | undefined) => {
        try {
          parseDeclaredTotal(value);
        } catch (err) {
          throw new InvalidArgumentError((err as Error).message);
        }
        return [...(previous ?? []), value];
      }),
    );
}

/** The declared totals the flags give, if any. */
export function declaredTotalsFromFlags(flags: ExpectFlags): DeclaredTotals | undefined {
  try {
    return declaredTotalsOf(flags.expectRows, flags.expectTotal ?? []);
  } catch (err) {
    throw new CliError((err as Error).message, EXIT.usage);
  }
}
