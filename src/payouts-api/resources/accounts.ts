import { paginate } from "../pagination.js";
import type { ListQuery } from "../query.js";
import {
  Account,
  type AccountCreate,
  AccountList,
  type AccountListParams,
  type AccountUpdate,
  type ListEnvelope,
} from "../wire-types.js";
import { pathId, type ReadOptions, type ResourceContext, type WriteOptions } from "./resource-context.js";

export function accountsResource(ctx: ResourceContext) {
  const list = (params: AccountListParams = {}, opts: ReadOptions = {}): Promise<ListEnvelope<Account>> =>
    ctx.requester.send({
      method: "GET",
      path: "/accounts",
      query: params as ListQuery,
      schema: AccountList,
      entityScoped: true,
      signal: opts.signal,
    });
  return {
    /** One page of accounts, newest first (`ownershipType`, `type`, `externalId`, ... filters). */
    list,
    /** Every account matching the filters, across all pages. */
    listAll: (params: AccountListParams = {}, opts: ReadOptions = {}) =>
      paginate((p) => list(p, opts), params),
    get: (id: string, opts: ReadOptions = {}): Promise<Account> =>
      ctx.requester.send({
        method: "GET",
        path: `/accounts/${pathId(id)}`,
        schema: Account,
        entityScoped: true,
        signal: opts.signal,
      }),
    create: (body: AccountCreate, opts: WriteOptions = {}): Promise<Account> =>
      ctx.requester.send({
        method: "POST",
        path: "/accounts",
        body,
        schema: Account,
        entityScoped: true,
        idempotencyKey: opts.idempotencyKey ?? ctx.newIdempotencyKey(),
        sonarToken: opts.sonarToken,
        signal: opts.signal,
      }),
    update: (id: string, body: AccountUpdate, opts: WriteOptions = {}): Promise<Account> =>
      ctx.requester.send({
        method: "PATCH",
        path: `/accounts/${pathId(id)}`,
        body,
        schema: Account,
        entityScoped: true,
        sonarToken: opts.sonarToken,
        signal: opts.signal,
      }),
    delete: (id: string, opts: WriteOptions = {}): Promise<void> =>
      ctx.requester.send<void>({
        method: "DELETE",
        path: `/accounts/${pathId(id)}`,
        entityScoped: true,
        sonarToken: opts.sonarToken,
        signal: opts.signal,
      }),
  };
}
