import {
  AccountLink,
  Attachment,
  type AttachmentCreate,
  type EventType,
  Limitations,
  type OwnershipType,
  WebhookEndpoint,
  type WebhookEndpointUpdate,
  WebhookEventTypes,
} from "../wire-types.js";
import type { ReadOptions, ResourceContext, WriteOptions } from "./resource-context.js";

export function limitationsResource(ctx: ResourceContext) {
  return {
    /** Which write operations the entity may do today, and why not. Unknown operations are kept. */
    get: (opts: ReadOptions = {}): Promise<Limitations> =>
      ctx.requester.send({
        method: "GET",
        path: "/limitations",
        schema: Limitations,
        entityScoped: true,
        signal: opts.signal,
      }),
  };
}

export function attachmentsResource(ctx: ResourceContext) {
  return {
    /** Uploads a document (base64 JSON, see wire-types) to reference from a payment or owner. */
    create: (body: AttachmentCreate, opts: WriteOptions = {}): Promise<Attachment> =>
      ctx.requester.send({
        method: "POST",
        path: "/attachments",
        body,
        schema: Attachment,
        entityScoped: true,
        idempotencyKey: opts.idempotencyKey ?? ctx.newIdempotencyKey(),
        sonarToken: opts.sonarToken,
        signal: opts.signal,
      }),
  };
}

export function accountLinksResource(ctx: ResourceContext) {
  return {
    /** Mints the hosted account-link session; the returned URL carries a short-lived token. */
    create: (body: { ownershipType?: OwnershipType } = {}, opts: WriteOptions = {}): Promise<AccountLink> =>
      ctx.requester.send({
        method: "POST",
        path: "/accounts/link",
        body,
        schema: AccountLink,
        entityScoped: true,
        sonarToken: opts.sonarToken,
        signal: opts.signal,
      }),
  };
}

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
