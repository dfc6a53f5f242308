/**
 * List parameters and cursor pagination shared by every list endpoint (pure). Order is newest first by
 * `createdAt`; ties are broken by insertion sequence so pages are stable even within one millisecond.
 */

import { validationError } from "./errors.js";
import { PAGE_LIMIT_MAX } from "./wire.js";

export interface Listable {
  id: string;
  seq: number;
  createdMs: number;
  externalId?: string | undefined;
  metadata?: Record<string, string> | undefined;
}

export interface ListQuery {
  limit: number;
  startingAfter?: string;
  endingBefore?: string;
  externalId?: string;
  createdGte?: number;
  createdLte?: number;
  metadata: [string, string][];
}

const METADATA_PARAM = /^metadata\[(.+)\]$/;

function parseTimestamp(name: string, value: string): number {
  // Require an RFC 3339 shape, not just anything Date.parse accepts.
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(value)
    ? Date.parse(value)
    : Number.NaN;
  if (Number.isNaN(ms)) {
    throw validationError(`${name} must be an RFC 3339 timestamp`, [
      { path: name, message: "invalid timestamp" },
    ]);
  }
  return ms;
}

/** Reads the common list parameters; throws 400 on anything out of range. */
export function parseListQuery(params: URLSearchParams): ListQuery {
  const query: ListQuery = { limit: PAGE_LIMIT_MAX, metadata: [] };
  const limit = params.get("limit");
  if (limit !== null) {
    const n = /^\d+$/.test(limit) ? Number(limit) : Number.NaN;
    if (!Number.isInteger(n) || n < 1 || n > PAGE_LIMIT_MAX) {
      throw validationError(`limit must be an integer from 1 to ${PAGE_LIMIT_MAX}`, [
        { path: "limit", message: `integer 1 to ${PAGE_LIMIT_MAX}` },
      ]);
    }
    query.limit = n;
  }
  const startingAfter = params.get("startingAfter");
  const endingBefore = params.get("endingBefore");
  if (startingAfter !== null && endingBefore !== null) {
    throw validationError("startingAfter and endingBefore are mutually exclusive", [
      { path: "startingAfter", message: "cannot be combined with endingBefore" },
    ]);
  }
  if (startingAfter !== null) query.startingAfter = startingAfter;
  if (endingBefore !== null) query.endingBefore = endingBefore;
  const externalId = params.get("externalId");
  if (externalId !== null) query.externalId = externalId;
  const gte = params.get("created[gte]");
  if (gte !== null) query.createdGte = parseTimestamp("created[gte]", gte);
  const lte = params.get("created[lte]");
  if (lte !== null) query.createdLte = parseTimestamp("created[lte]", lte);
  for (const [key, value] of params) {
    const m = METADATA_PARAM.exec(key);
    if (m?.[1]) query.metadata.push([m[1], value]);
  }
  return query;
}

/** Newest first; a later insertion wins a createdAt tie. */
export function newestFirst(a: Listable, b: Listable): number {
  return b.createdMs - a.createdMs || b.seq - a.seq;
}

export function matchesCommonFilters(item: Listable, q: ListQuery): boolean {
  if (q.externalId !== undefined && item.externalId !== q.externalId) return false;
  if (q.createdGte !== undefined && item.createdMs < q.createdGte) return false;
  if (q.createdLte !== undefined && item.createdMs > q.createdLte) return false;
  for (const [k, v] of q.metadata) if (item.metadata?.[k] !== v) return false;
  return true;
}

/** The item a `startingAfter`/`endingBefore` id names (undefined without one); an unknown id is 400. */
export function cursorOf<T>(q: ListQuery, lookup: (id: string) => T | undefined): T | undefined {
  const cursorId = q.startingAfter ?? q.endingBefore;
  if (cursorId === undefined) return undefined;
  const cursor = lookup(cursorId);
  if (!cursor) {
    const param = q.startingAfter !== undefined ? "startingAfter" : "endingBefore";
    throw validationError(`${param} is not an id of this list`, [
      { path: param, message: "unknown cursor id" },
    ]);
  }
  return cursor;
}

/**
 * One page of `items` (already filtered). The cursor is any id of the collection (`all`), even one the
 * filters exclude: its position is taken from its sort key. An id that is not in the collection is 400.
 */
export function paginate<T extends Listable>(
  items: readonly T[],
  q: ListQuery,
  all: ReadonlyMap<string, Listable>,
): { data: T[]; hasMore: boolean } {
  const sorted = [...items].sort(newestFirst);
  const cursorId = q.startingAfter ?? q.endingBefore;
  if (cursorId === undefined) {
    return { data: sorted.slice(0, q.limit), hasMore: sorted.length > q.limit };
  }
  const cursor = cursorOf(q, (id) => all.get(id)) as Listable;
  if (q.startingAfter !== undefined) {
    const older = sorted.filter((i) => newestFirst(cursor, i) < 0);
    return { data: older.slice(0, q.limit), hasMore: older.length > q.limit };
  }
  // endingBefore: the `limit` items just newer than the cursor, still newest first.
  const newer = sorted.filter((i) => newestFirst(i, cursor) < 0);
  return { data: newer.slice(Math.max(0, newer.length - q.limit)), hasMore: newer.length > q.limit };
}
