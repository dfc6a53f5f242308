/** Process entry of the `payouts` bin: run the program and exit with its code. */
import { main } from "./program.js";

/**
 * Once the command has ended, nothing may keep the process up: a connection still retrying, a timer
 * someone forgot. Unref'd, this fires only in that case, and ends the process with the command's code.
 */
const LINGER_MS = 5_000;

process.exitCode = await main(process.argv);
setTimeout(() => process.exit(), LINGER_MS).unref();
