/** The partner's webhook endpoint and its event types (`/webhook`). */
import {
  type EventType,
  WebhookEndpoint,
  type WebhookEndpointUpdate,
  WebhookEventTypes,
} from "../wire-types.js";
import type { ReadOptions, ResourceContext } from "./resource-context.js";

/** The partner's single webhook endpoint (per partner: no entity header). */
export function webhookResource(ctx: ResourceContext) {
  return {
    /** The endpoint; rejects with a 404 `PayoutsApiNotFoundError` when none is configured. */
    get: (opts: ReadOptions = {}): Promise<WebhookEndpoint> =>
      ctx.requester.send({
        method: "GET",
        path: "/webhook",
        schema: WebhookEndpoint,
        entityScoped: false,
        signal: opts.signal,
      }),
    /** Partial update; `url` and `events` are required on first configuration. */
    update: (body: WebhookEndpointUpdate, opts: ReadOptions = {}): Promise<WebhookEndpoint> =>
      ctx.requester.send({
        method: "PATCH",
        path: "/webhook",
        body,
        schema: WebhookEndpoint,
        entityScoped: false,
        signal: opts.signal,
      }),
    delete: (opts: ReadOptions = {}): Promise<void> =>
      ctx.requester.send<void>({
        method: "DELETE",
        path: "/webhook",
        entityScoped: false,
        signal: opts.signal,
      }),
    /** The event types that can be subscribed to. */
    eventTypes: async (opts: ReadOptions = {}): Promise<EventType[]> => {
      const res = await ctx.requester.send({
        method: "GET",
        path: "/webhook/events",
        schema: WebhookEventTypes,
        entityScoped: false,
        signal: opts.signal,
      });
      return res.data;
    },
  };
}
