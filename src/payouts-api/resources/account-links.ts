/** Hosted account-link sessions (`POST /accounts/link`). */
import { AccountLink, type OwnershipType } from "../wire-types.js";
import type { ResourceContext, WriteOptions } from "./resource-context.js";

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
