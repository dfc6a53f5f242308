/** Option parsers shared by commands; each names the flag in its error so the user knows what to fix. */
import { InvalidArgumentError, Option } from "commander";
import { DEFAULT_KEY_PREFIX } from "../batches/index.js";

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
