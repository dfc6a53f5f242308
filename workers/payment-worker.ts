/**
 * Thin entry point of the payment worker, for process managers that start a file rather than the
 * CLI: `node dist/workers/payment-worker.js [worker options]` is `payouts worker [options]`.
 */
import { main } from "../src/cli/program.js";

process.exitCode = await main([process.argv[0] ?? "node", "payouts", "worker", ...process.argv.slice(2)]);
