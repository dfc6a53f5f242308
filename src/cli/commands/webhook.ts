/**
 * `payouts webhook setup --url https://… [--events …]` configures the partner's webhook endpoint with
 * the events this tool consumes; `payouts webhook show` prints it.
 */
import { type Command, InvalidArgumentError } from "commander";
import { loadConfig } from "../../config/index.js";
import { PayoutsApiNotFoundError } from "../../payouts-api/index.js";
import { EVENT_TYPES, type EventType, type WebhookEndpoint } from "../../payouts-api/wire-types.js";
import { CONSUMED_EVENTS } from "../../webhooks/index.js";
import { connectApi } from "../api-connection.js";
import { CliError } from "../exit-codes.js";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The spec wants https; plain http is allowed to a loopback address only (the sandbox accepts that). */
export function parseWebhookUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(
      "expected an absolute URL, e.g. https://payouts.example.com/webhooks/payouts",
    );
  }
  if (url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname)))
    return url.toString();
  throw new InvalidArgumentError("the endpoint must be an https URL (http only to 127.0.0.1 or localhost)");
}

/** `--events a,b`; `api.account.*` stands for the three account events. */
export function parseEventList(value: string): EventType[] {
  const out = new Set<EventType>();
  for (const raw of value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (raw === "api.account.*") {
      for (const e of EVENT_TYPES) if (e.startsWith("api.account.")) out.add(e);
    } else if ((EVENT_TYPES as readonly string[]).includes(raw)) {
      out.add(raw as EventType);
    } else {
      throw new InvalidArgumentError(`unknown event ${raw}; known: ${EVENT_TYPES.join(", ")}`);
    }
  }
  if (out.size === 0) throw new InvalidArgumentError("name at least one event");
  return [...out];
}

function describeEndpoint(e: WebhookEndpoint): string {
  return [
    `url       ${e.url}`,
    `active    ${e.isActive ? "yes" : "no (deliveries paused)"}`,
    `events    ${e.events.join(", ")}`,
    ...(e.description ? [`about     ${e.description}`] : []),
    `updated   ${e.updatedAt}`,
    "",
  ].join("\n");
}

export function registerWebhook(program: Command): void {
  const webhook = program.command("webhook").description("Configure the partner's webhook endpoint");
  webhook
    .command("setup")
    .description("Point the service's webhook deliveries at this tool (`payouts serve`)")
    .requiredOption("--url <url>", "public https URL of POST /webhooks/payouts", parseWebhookUrl)
    .option(
      "--events <list>",
      `comma-separated events (default: ${CONSUMED_EVENTS.join(",")})`,
      parseEventList,
    )
    .option("--description <text>", "shown with the endpoint")
    .action(async (opts: { url: string; events?: EventType[]; description?: string }) => {
      const connection = await connectApi(loadConfig(), { sandbox: "never" });
      try {
        const endpoint = await connection.api.webhook.update({
          url: opts.url,
          events: opts.events ?? [...CONSUMED_EVENTS],
          isActive: true,
          ...(opts.description ? { description: opts.description } : {}),
        });
        process.stdout.write(`webhook endpoint configured\n${describeEndpoint(endpoint)}`);
      } finally {
        await connection.close();
      }
    });
  webhook
    .command("show")
    .description("Print the configured webhook endpoint")
    .action(async () => {
      const connection = await connectApi(loadConfig(), { sandbox: "never" });
      try {
        const endpoint = await connection.api.webhook.get();
        process.stdout.write(describeEndpoint(endpoint));
      } catch (err) {
        if (err instanceof PayoutsApiNotFoundError) {
          throw new CliError(
            "no webhook endpoint is configured; run `payouts webhook setup --url https://…`",
          );
        }
        throw err;
      } finally {
        await connection.close();
      }
    });
}
