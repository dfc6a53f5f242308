/** What the entity may do today (`GET /limitations`). */
import { Limitations } from "../wire-types.js";
import type { ReadOptions, ResourceContext } from "./resource-context.js";

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
