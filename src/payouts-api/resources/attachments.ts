/** Supporting documents (`POST /attachments`), referenced from a payment or a beneficial owner. */
import { Attachment, type AttachmentCreate } from "../wire-types.js";
import type { ResourceContext, WriteOptions } from "./resource-context.js";

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
