/**
 * What validation needs to know about the partner's live state, fetched once per sheet: every account
 * (all pages) and the entity's limitations. Rules read it through lookups, never through the network.
 */
import type { Account, Capability, Limitations } from "../payouts-api/wire-types.js";

export interface LiveContext {
  /** By `acct_` id and by `externalId` (ids and externalIds cannot collide: ids carry the prefix). */
  findAccount(ref: string): Account | undefined;
  /** The capability of a limitable operation; undefined when the service does not list it. */
  capability(operation: string): Capability | undefined;
}

export function buildLiveContext(accounts: Iterable<Account>, limitations: Limitations): LiveContext {
  const byRef = new Map<string, Account>();
  for (const account of accounts) {
    byRef.set(account.id, account);
    if (account.externalId) byRef.set(account.externalId, account);
  }
  const capabilities = new Map(limitations.capabilities.map((c) => [c.operation, c]));
  return {
    findAccount: (ref) => byRef.get(ref),
    capability: (operation) => capabilities.get(operation),
  };
}

/** The part of the API client that live data is read through. */
export interface LiveDataSource {
  accounts: { listAll(params?: object): AsyncIterable<Account> };
  limitations: { get(): Promise<Limitations> };
}

export async function fetchLiveContext(api: LiveDataSource): Promise<LiveContext> {
  const [accounts, limitations] = await Promise.all([collect(api.accounts.listAll()), api.limitations.get()]);
  return buildLiveContext(accounts, limitations);
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
