/**
 * `payouts approve <batch>`: approves a batch waiting for approval, through `payouts serve`'s API
 * with the bearer token in PAYOUTS_TOKEN (never through Redis): shell access alone approves nothing,
 * and the server applies the same rules as the console (the approver role, never the submitter).
 */
import type { Command } from "commander";
import { request } from "undici";
import { loadConfig } from "../../config/index.js";
import { CliError, EXIT } from "../exit-codes.js";

interface ApprovalAnswer {
  outcome: string;
  approval: {
    status: string;
    required: number;
    approvals: { by: string; at: string }[];
    decidedBy: string | null;
    reason: string | null;
  };
}

/** POSTs a decision to the server's API; returns its answer or throws a CliError with the API's message. */
export async function decideOverApi(
  batchId: string,
  action: "approve" | "reject",
  body: Record<string, string> = {},
): Promise<ApprovalAnswer> {
  const config = loadConfig();
  if (!config.token) {
    throw new CliError(
      "PAYOUTS_TOKEN must be set to an API token of a user with the approver role " +
        "(an admin creates one with `payouts token create <name> --role approver`)",
      EXIT.usage,
    );
  }
  const url = `${config.serverUrl}/api/v1/batches/${encodeURIComponent(batchId)}/${action}`;
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(url, {
      method: "POST",
      headers: { authorization: `Bearer ${config.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
  } catch (err) {
    throw new CliError(
      `cannot reach payouts serve at ${config.serverUrl} (PAYOUTS_SERVER_URL): ${(err as Error).message}`,
      EXIT.usage,
    );
  }
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (res.statusCode === 200) return json as ApprovalAnswer;
  const error = (json as { error?: { code?: string; message?: string } } | undefined)?.error;
  const message = `${error?.code ?? `HTTP ${res.statusCode}`}: ${error?.message ?? text.slice(0, 200)}`;
  // A bad or revoked token is the environment's fault; a refusal (role, own batch, not waiting) is the input's.
  throw new CliError(message, res.statusCode === 401 ? EXIT.usage : EXIT.inputProblems);
}

/** What a decision's answer says, for people. */
export function describeAnswer(batchId: string, answer: ApprovalAnswer): string {
  const a = answer.approval;
  const who = a.approvals.map((x) => `${x.by} (${x.at})`).join(", ");
  switch (answer.outcome) {
    case "approved":
      return `batch ${batchId} approved by ${who}: its rows are queued for payment`;
    case "recorded":
      return `approval recorded for batch ${batchId} (${a.approvals.length} of ${a.required}: ${who}); it waits for more`;
    case "already":
      return `you had already approved batch ${batchId} (it is ${a.status}; ${a.approvals.length} of ${a.required})`;
    case "rejected":
      return `batch ${batchId} rejected by ${a.decidedBy ?? "you"}: ${a.reason ?? ""}; its rows are canceled`;
    default:
      return `batch ${batchId}: ${answer.outcome} (${a.status})`;
  }
}

export function registerApprove(program: Command): void {
  program
    .command("approve")
    .description("Approve a batch waiting for approval (through payouts serve, with PAYOUTS_TOKEN)")
    .argument("<batch>", "batch id")
    .addHelpText(
      "after",
      "\nEnvironment: PAYOUTS_TOKEN (an approver's API token), PAYOUTS_SERVER_URL (default http://127.0.0.1:$HTTP_PORT)." +
        "\nExit codes: 0 approved or recorded, 1 refused (role, own batch, not awaiting approval, unknown batch), 2 no token, bad token or server unreachable.",
    )
    .action(async (batchId: string) => {
      const answer = await decideOverApi(batchId, "approve");
      process.stdout.write(`${describeAnswer(batchId, answer)}\n`);
      process.exitCode = EXIT.ok;
    });
}
