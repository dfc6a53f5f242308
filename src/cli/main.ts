/** Process entry of the `payouts` bin: run the program and exit with its code. */
import { main } from "./program.js";

process.exitCode = await main(process.argv);
