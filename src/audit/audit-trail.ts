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

  /** The newest entries first; `cursor` is the `nextCursor` of the previous page. */
  async list(options: { limit: number; cursor?: string | undefined }): Promise<{
    data: AuditEntry[];
    nextCursor: string | null;
  }> {
    const end = options.cursor ? `(${options.cursor}` : "+";
    const raw = await this.redis.xrevrange(this.key, end, "-", "COUNT", options.limit + 1);
    const entries = raw.slice(0, options.limit).map(([id, fields]) => {
      const f: Record<string, string> = {};
      for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i] as string] = fields[i + 1] as string;
      return { id, at: f.at ?? "", ...(JSON.parse(f.entry ?? "{}") as AuditInput) };
    });
    const last = entries.at(-1);
    return { data: entries, nextCursor: raw.length > options.limit && last ? last.id : null };
  }
}

/** A stream id as given back in `nextCursor` (`<ms>-<seq>`). */
export const AUDIT_CURSOR_PATTERN = /^\d{1,20}-\d{1,20}$/;
