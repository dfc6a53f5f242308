/** The partner's single webhook endpoint: PATCH creates or partially updates, DELETE removes. */

import { notFound, parseOrThrow, validationError } from "./errors.js";
import type { SandboxState } from "./state.js";
import { type WebhookEndpoint, WebhookEndpointUpdate } from "./wire.js";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * The spec allows `https` only; the sandbox also accepts `http` to a loopback host so a local receiver
 * can be used without certificates.
 */
export function isAcceptableWebhookUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol === "https:") return true;
  return parsed.protocol === "http:" && LOOPBACK_HOSTS.has(parsed.hostname);
}

export function getWebhook(state: SandboxState): WebhookEndpoint {
  if (!state.webhook) throw notFound("no webhook endpoint is configured");
  return state.webhook;
}

export function patchWebhook(state: SandboxState, rawBody: unknown): WebhookEndpoint {
  const body = parseOrThrow(WebhookEndpointUpdate, rawBody);
  if (body.url !== undefined && !isAcceptableWebhookUrl(body.url)) {
    throw validationError("url must be an https URL (the sandbox also accepts http to 127.0.0.1/localhost)", [
      { path: "url", message: "must be https" },
    ]);
  }
  const iso = state.isoNow();
  const current = state.webhook;
  if (!current) {
    const missing = [
      ...(body.url === undefined ? [{ path: "url", message: "required when no endpoint exists yet" }] : []),
      ...(body.events === undefined
        ? [{ path: "events", message: "required when no endpoint exists yet" }]
        : []),
    ];
    if (missing.length || body.url === undefined || body.events === undefined) {
      throw validationError("url and events are required on first configuration", missing);
    }
    state.webhook = {
      url: body.url,
      ...(body.description !== undefined ? { description: body.description } : {}),
      events: [...new Set(body.events)],
      isActive: body.isActive ?? true,
      createdAt: iso,
      updatedAt: iso,
    };
    return state.webhook;
  }
  if (body.url !== undefined) current.url = body.url;
  if (body.description !== undefined) current.description = body.description;
  if (body.events !== undefined) current.events = [...new Set(body.events)];
  if (body.isActive !== undefined) current.isActive = body.isActive;
  current.updatedAt = iso;
  return current;
}

export function deleteWebhook(state: SandboxState): { deleted: true } {
  if (!state.webhook) throw notFound("no webhook endpoint is configured");
  state.webhook = undefined;
  return { deleted: true };
}
