/** Option parsers shared by commands; each names the flag in its error so the user knows what to fix. */
import { InvalidArgumentError } from "commander";

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
