/**
 * The audit trail: who did what, when, from where, with what outcome. One Redis stream
 * (`<prefix>:audit`), newest last, capped at about `maxEntries` (old entries are trimmed, never
 * rewritten). The stream id is the entry's id and the paging cursor.
 */
import type { RedisClient } from "../redis/index.js";

export const DEFAULT_AUDIT_MAX_ENTRIES = 1_000_000;

export type AuditOutcome = "ok" | "denied" | "failed";

export interface AuditActor {
  kind: "user" | "token" | "anonymous" | "cli" | "system";
  name: string;
  role?: string | undefined;
}

export interface AuditInput {
  actor: AuditActor;
  /** What was done, as `noun.verb`: `sheet.upload`, `batch.submit`, `rows.retry`, `login`, `token.create`… */
  action: string;
  /** What it was done to (a batch id, `batch/row`, a user or token name). */
  target?: string | undefined;
  /** Where the request came from (client IP); `cli` for commands. */
  from: string;
  outcome: AuditOutcome;
  /** Small facts worth keeping (counts, codes); never secrets. */
  detail?: Record<string, unknown> | undefined;
}

export interface AuditEntry extends AuditInput {
  id: string;
  at: string;
}

export class AuditTrail {
  private readonly key: string;

  constructor(
    readonly redis: RedisClient,
    prefix = "payouts",
    private readonly maxEntries = DEFAULT_AUDIT_MAX_ENTRIES,
  ) {
    this.key = `${prefix}:audit`;
  }

  async record(input: AuditInput): Promise<string> {
    const at = new Date().toISOString();
    const id = await this.redis.xadd(
      this.key,
      "MAXLEN",
      "~",
      String(this.maxEntries),
      "*",
      "at",
      at,
      "entry",
      JSON.stringify(input),
    );
    return id ?? "";
  }

  /**
   * The newest entries first; `cursor` is the `nextCursor` of the previous page. With a filter, at
   * most `scanBudget` entries are looked at per call (the trail is a stream, not an index): a page
   * may then hold fewer than `limit` entries and still have a `nextCursor` to go on from.
   */
  async list(options: {
    limit: number;
    cursor?: string | undefined;
    filter?: AuditFilter | undefined;
    scanBudget?: number | undefined;
  }): Promise<{
    data: AuditEntry[];
    nextCursor: string | null;
  }> {
    const filter = options.filter ?? {};
    const budget = options.scanBudget ?? DEFAULT_AUDIT_SCAN_BUDGET;
    const data: AuditEntry[] = [];
    let end = options.cursor ? `(${options.cursor}` : "+";
    let scanned = 0;
    let lastId: string | undefined;
    for (;;) {
      const count = isEmptyFilter(filter) ? options.limit + 1 - data.length : AUDIT_SCAN_CHUNK;
      const raw = await this.redis.xrevrange(this.key, end, "-", "COUNT", count);
      for (const [id, fields] of raw) {
        const entry = entryOf(id, fields);
        if (!matchesAuditFilter(entry, filter)) {
          scanned++;
          lastId = id;
          continue;
        }
        if (data.length === options.limit) return { data, nextCursor: lastId ?? null };
        data.push(entry);
        scanned++;
        lastId = id;
      }
      if (raw.length < count) return { data, nextCursor: null };
      if (scanned >= budget) return { data, nextCursor: lastId ?? null };
      end = `(${raw.at(-1)![0]}`;
    }
  }

  /** Every entry matching `filter`, newest first, a chunk at a time (for an export). */
  async *entries(filter: AuditFilter = {}): AsyncGenerator<AuditEntry> {
    let end = "+";
    for (;;) {
      const raw = await this.redis.xrevrange(this.key, end, "-", "COUNT", AUDIT_SCAN_CHUNK);
      for (const [id, fields] of raw) {
        const entry = entryOf(id, fields);
        if (matchesAuditFilter(entry, filter)) yield entry;
      }
      if (raw.length < AUDIT_SCAN_CHUNK) return;
      end = `(${raw.at(-1)![0]}`;
    }
  }
}

/** Which entries to show: all given parts must match. */
export interface AuditFilter {
  /** A batch id: entries about the batch or one of its rows (`<batch>/<row>`). */
  batch?: string | undefined;
  /** The actor's name exactly (`alice`, `cli:ops`, `system:inbox`). */
  actor?: string | undefined;
  /** An action (`rows.correct`), or its first part (`rows`, every `rows.*`). */
  action?: string | undefined;
}

/** Entries looked at per filtered page at most, and read from Redis at a time. */
export const DEFAULT_AUDIT_SCAN_BUDGET = 20_000;
const AUDIT_SCAN_CHUNK = 500;

function isEmptyFilter(filter: AuditFilter): boolean {
  return !filter.batch && !filter.actor && !filter.action;
}

export function matchesAuditFilter(entry: AuditEntry, filter: AuditFilter): boolean {
  if (filter.batch) {
    const target = entry.target ?? "";
    if (target !== filter.batch && !target.startsWith(`${filter.batch}/`)) return false;
  }
  if (filter.actor && entry.actor?.name !== filter.actor) return false;
  if (filter.action && entry.action !== filter.action && !entry.action.startsWith(`${filter.action}.`)) {
    return false;
  }
  return true;
}

function entryOf(id: string, fields: string[]): AuditEntry {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i] as string] = fields[i + 1] as string;
  return { id, at: f.at ?? "", ...(JSON.parse(f.entry ?? "{}") as AuditInput) };
}

/** A stream id as given back in `nextCursor` (`<ms>-<seq>`). */
export const AUDIT_CURSOR_PATTERN = /^\d{1,20}-\d{1,20}$/;
