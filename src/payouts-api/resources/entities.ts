import { paginate } from "../pagination.js";
import type { ListQuery } from "../query.js";
import {
  type BeneficialOwner,
  type BeneficialOwnerInput,
  BeneficialOwnerSet,
  Entity,
  type ListEnvelope,
  listEnvelope,
  type PageParams,
} from "../wire-types.js";
import { pathId, type ReadOptions, type ResourceContext, type WriteOptions } from "./resource-context.js";

const EntityList = listEnvelope(Entity);

/** Entities of the partner (not entity-scoped: no `Service-Entity-Id`). */
export function entitiesResource(ctx: ResourceContext) {
  const list = (params: PageParams = {}, opts: ReadOptions = {}): Promise<ListEnvelope<Entity>> =>
    ctx.requester.send({
      method: "GET",
      path: "/entities",
      query: params as ListQuery,
      schema: EntityList,
      entityScoped: false,
      signal: opts.signal,
    });
  return {
    list,
    listAll: (params: PageParams = {}, opts: ReadOptions = {}) => paginate((p) => list(p, opts), params),
  };
}

/** Beneficial owners take the entity in the path; the default is the client's entity. */
export function beneficialOwnersResource(ctx: ResourceContext) {
  return {
    get: async (entityId: string = ctx.entityId, opts: ReadOptions = {}): Promise<BeneficialOwner[]> => {
      const set = await ctx.requester.send({
        method: "GET",
        path: `/entities/${pathId(entityId)}/beneficial-owners`,
        schema: BeneficialOwnerSet,
        entityScoped: false,
        signal: opts.signal,
      });
      return set.data;
    },
    /**
     * Replaces the whole set: entries with an `id` are updated, entries without are created, anyone
     * missing is deleted. Read the current set, change it, send it back whole.
     */
    replace: async (
      entityId: string,
      owners: BeneficialOwnerInput[],
      opts: WriteOptions = {},
    ): Promise<BeneficialOwner[]> => {
      const set = await ctx.requester.send({
        method: "PUT",
        path: `/entities/${pathId(entityId)}/beneficial-owners`,
        body: { data: owners },
        schema: BeneficialOwnerSet,
        entityScoped: false,
        sonarToken: opts.sonarToken,
        signal: opts.signal,
      });
      return set.data;
    },
  };
}
