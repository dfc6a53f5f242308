import { pages, paginate } from "../pagination.js";
import type { ListQuery } from "../query.js";
import {
  type ListEnvelope,
  Payment,
  type PaymentCreate,
  PaymentList,
  type PaymentListParams,
  type PaymentUpdate,
} from "../wire-types.js";
import { pathId, type ReadOptions, type ResourceContext, type WriteOptions } from "./resource-context.js";

/** Payment creation always names its key: it is derived from the row, never generated here. */
export interface PaymentCreateOptions extends WriteOptions {
  idempotencyKey: string;
  /** Awaited right before each try leaves (see ApiRequest.beforeTry); a throw sends nothing more. */
  beforeTry?: (() => Promise<void>) | undefined;
}

export function paymentsResource(ctx: ResourceContext) {
  const list = (params: PaymentListParams = {}, opts: ReadOptions = {}): Promise<ListEnvelope<Payment>> =>
    ctx.requester.send({
      method: "GET",
      path: "/payments",
      query: params as ListQuery,
      schema: PaymentList,
      entityScoped: true,
      signal: opts.signal,
    });
  const update = (id: string, body: PaymentUpdate, opts: WriteOptions = {}): Promise<Payment> =>
    ctx.requester.send({
      method: "PATCH",
      path: `/payments/${pathId(id)}`,
      body,
      schema: Payment,
      entityScoped: true,
      sonarToken: opts.sonarToken,
      signal: opts.signal,
    });
  return {
    /**
     * Creates a payment. `idempotencyKey` is required: a retry (here or by a queue) must reuse the
     * key of the first try, so only the caller, who knows the row, can supply it.
     */
    create: (body: PaymentCreate, opts: PaymentCreateOptions): Promise<Payment> => {
      if (!opts?.idempotencyKey) {
        return Promise.reject(new TypeError("payments.create needs an idempotencyKey derived from the row"));
      }
      return ctx.requester.send({
        method: "POST",
        path: "/payments",
        body,
        schema: Payment,
        entityScoped: true,
        idempotencyKey: opts.idempotencyKey,
        sonarToken: opts.sonarToken,
        signal: opts.signal,
        beforeTry: opts.beforeTry,
      });
    },
    get: (id: string, opts: ReadOptions = {}): Promise<Payment> =>
      ctx.requester.send({
        method: "GET",
        path: `/payments/${pathId(id)}`,
        schema: Payment,
        entityScoped: true,
        signal: opts.signal,
      }),
    /** One page of payments, newest first (`status`, account, `externalId`, `metadata`, ... filters). */
    list,
    /** Every payment matching the filters, across all pages. */
    listAll: (params: PaymentListParams = {}, opts: ReadOptions = {}) =>
      paginate((p) => list(p, opts), params),
    /** The same, a page (up to `limit`, default 50 payments) at a time. */
    listPages: (params: PaymentListParams = {}, opts: ReadOptions = {}) =>
      pages((p) => list(p, opts), params),
    /** Edits memo/note/metadata of a `scheduled` payment. */
    update,
    /** Cancels a `scheduled` payment (409 `PAYMENT_NOT_CANCELABLE` otherwise). */
    cancel: (id: string, opts: WriteOptions = {}): Promise<Payment> =>
      update(id, { status: "canceled" }, opts),
  };
}
