/**
 * Payee names for the console: the service's accounts (id → name and external id), fetched at most once
 * a few minutes per server and shared by every request, so a page of rows shows who is paid without a
 * call per row. A failed fetch leaves names out (the account as the sheet named it still shows).
 */
import type { LiveDataSource } from "../intake/live-context.js";

/** How long a fetched list of accounts is used. */
export const PAYEE_DIRECTORY_TTL_MS = 5 * 60_000;

export interface PayeeEntry {
  name: string | undefined;
  externalId: string | undefined;
}

export interface PayeeDirectory {
  /** Accounts by id (possibly empty when the service could not be asked). */
  entries(): Promise<ReadonlyMap<string, PayeeEntry>>;
  /** Ids of payees whose name or external id contains `text` (case-insensitive). */
  idsMatching(text: string): Promise<string[]>;
}

export function createPayeeDirectory(api: LiveDataSource, now: () => number = Date.now): PayeeDirectory {
  let cached: { at: number; map: Promise<Map<string, PayeeEntry>> } | undefined;

  async function fetchAll(): Promise<Map<string, PayeeEntry>> {
    const map = new Map<string, PayeeEntry>();
    try {
      for await (const a of api.accounts.listAll({ ownershipType: "external" })) {
        map.set(a.id, { name: a.counterPartyName ?? undefined, externalId: a.externalId ?? undefined });
      }
    } catch {
      // The service is away: rows show the account as the sheet named it; names come back next time.
      cached = undefined;
    }
    return map;
  }

  function entries(): Promise<Map<string, PayeeEntry>> {
    if (!cached || now() - cached.at > PAYEE_DIRECTORY_TTL_MS) cached = { at: now(), map: fetchAll() };
    return cached.map;
  }

  return {
    entries,
    async idsMatching(text) {
      const needle = text.trim().toLowerCase();
      if (needle.length < 2) return [];
      const ids: string[] = [];
      for (const [id, e] of await entries()) {
        if (e.name?.toLowerCase().includes(needle) || e.externalId?.toLowerCase().includes(needle))
          ids.push(id);
      }
      return ids;
    },
  };
}
