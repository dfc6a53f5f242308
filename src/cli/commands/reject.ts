/** `payouts reject <batch> --reason TEXT`: rejects a batch waiting for approval (see approve.ts). */
import type { Command } from "commander";
import { EXIT } from "../exit-codes.js";
import { decideOverApi, describeAnswer } from "./approve.js";

export function registerReject(program: Command): void {
  program
    .command("reject")
    .description(
      "Reject a batch waiting for approval: its rows are canceled (through payouts serve, with PAYOUTS_TOKEN)",
    )
    .argument("<batch>", "batch id")
    .requiredOption("--reason <text>", "why (shown in the result file, the notification and the audit trail)")
    .addHelpText(
      "after",
      "\nEnvironment: PAYOUTS_TOKEN (an approver's API token), PAYOUTS_SERVER_URL (default http://127.0.0.1:$HTTP_PORT)." +
        "\nExit codes: 0 rejected, 1 refused (role, not awaiting approval, unknown batch), 2 no token, bad token or server unreachable.",
    )
    .action(async (batchId: string, opts: { reason: string }) => {
      const answer = await decideOverApi(batchId, "reject", { reason: opts.reason });
      process.stdout.write(`${describeAnswer(batchId, answer)}\n`);
      process.exitCode = EXIT.ok;
    });
}
