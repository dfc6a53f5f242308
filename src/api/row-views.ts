/**
 * What the API says about one row: its reference, payee, amount, state, what went wrong and what to do
 * (the error-code table), and, for a row not final yet, what it waits for. Invalid rows (never in the
 * pipeline) are shown in the same shape with state `invalid` and their problems.
 */
import type { z } from "zod";
import { type BatchStore, type InvalidRowRecord, type RowRecord, staticRowNumber } from "../batches/index.js";
import { errorHelp } from "../error-codes/index.js";
import { formatMinorOrRaw } from "../money/index.js";
import { DEFAULT_STALE_AFTER_MS, DEFAULT_SWEEP_EVERY_MS } from "../reconcile/index.js";
import type { PayeeEntry } from "./payee-directory.js";
import type { RowDetail, RowView as RowViewSchema } from "./schemas.js";

export type RowView = z.output<typeof RowViewSchema>;
export type RowDetailView = z.output<typeof RowDetail>;

/**
 * A row not final says it has had no word from the service once it has been quiet as long as the
 * reconcile sweep waits before it reads the payment itself (a webhook may have been lost): the same
 * figure, so what the row says is what the sweep does.
 */
export const QUIET_AFTER_MS = DEFAULT_STALE_AFTER_MS;

const money = formatMinorOrRaw;

/** Stored problem messages read "CODE: message"; the code is the part before. */
const CODED = /^([A-Z][A-Z0-9_]*):\s/;

const iso = (ms: number) => new Date(ms).toISOString();

/** What a row that is not final waits for, in a sentence; null for a final row. */
export function waitingFor(r: RowRecord, context: { heldForApproval: boolean; now: number }): string | null {
  const since = Date.parse(r.updatedAt);
  // The sweep reads a quiet row's payment on its next run: by one sweep interval from now at most.
  const quiet =
    context.now - since > QUIET_AFTER_MS
      ? ` No word from the service since ${r.updatedAt} (its webhook may be late or lost): the reconcile sweep reads the payment from the service itself, next by ${iso(context.now + DEFAULT_SWEEP_EVERY_MS)}.`
      : "";
  switch (r.state) {
    case "queued":
      if (context.heldForApproval)
        return "Waiting for approval: nothing is paid until the batch is approved.";
      if (r.inDoubtUntil !== undefined && r.inDoubtUntil > context.now) {
        return `Waiting until ${iso(r.inDoubtUntil)} before it is sent again: an earlier request may still reach the service.`;
      }
      return "Waiting for its turn: rows go to the payment queue a window at a time.";
    case "submitted":
      return `Sent; waiting for the service's confirmation that the payment started (a payment under review shows as scheduled).${quiet}`;
    case "in-progress":
      return `The service is moving the money; waiting for it to complete or fail.${quiet}`;
    default:
      return null;
  }
}

export function rowView(
  r: RowRecord,
  context: { payees: ReadonlyMap<string, PayeeEntry>; heldForApproval: boolean; now: number },
): RowView {
  const payee = context.payees.get(r.instruction.receivingAccountId);
  const named = r.source?.to_account;
  return {
    row: r.rowNumber,
    reference: r.instruction.reference ?? null,
    payee: {
      account: typeof named === "string" && named !== "" ? named : r.instruction.receivingAccountId,
      name: payee?.name ?? null,
    },
    amount: money(r.instruction.amount, r.instruction.currency),
    currency: r.instruction.currency,
    state: r.state,
    paymentId: r.paymentId ?? null,
    paymentStatus: r.paymentStatus ?? null,
    errorCode: r.errorCode ?? null,
    errorMessage: r.errorMessage ?? null,
    help: r.errorCode ? errorHelp(r.errorCode) : null,
    waitingFor: waitingFor(r, context),
    problems: [],
    attempt: r.attempt,
    updatedAt: r.updatedAt,
  };
}

function cell(source: InvalidRowRecord["source"], key: string): string | null {
  const v = source?.[key];
  return v === undefined || v === "" ? null : String(v);
}

export function invalidRowView(r: InvalidRowRecord, recordedAt: string): RowView {
  const code =
    r.problems.map((p) => CODED.exec(p.message)?.[1]).find((c) => c !== undefined) ?? "INVALID_ROW";
  const to = cell(r.source, "to_account");
  return {
    row: r.rowNumber,
    reference: cell(r.source, "reference"),
    payee: to ? { account: to, name: null } : null,
    amount: cell(r.source, "amount"),
    currency: cell(r.source, "currency"),
    state: "invalid",
    paymentId: null,
    paymentStatus: null,
    errorCode: code,
    errorMessage: r.problems.map((p) => p.message).join("; ") || null,
    help: errorHelp(code),
    waitingFor: null,
    problems: r.problems.map((p) => ({ column: p.column ?? null, message: p.message })),
    attempt: null,
    updatedAt: recordedAt,
  };
}

/** Invalid rows by row number (the batch's `invalid` hash), in the order asked. */
export async function invalidRowsByNumber(
  store: BatchStore,
  batchId: string,
  rowNumbers: readonly string[],
): Promise<InvalidRowRecord[]> {
  if (rowNumbers.length === 0) return [];
  const values = await store.redis.hmget(store.keys.invalid(batchId), ...rowNumbers);
  const out: InvalidRowRecord[] = [];
  values.forEach((json, i) => {
    if (!json) return;
    const parsed = JSON.parse(json) as Omit<InvalidRowRecord, "rowNumber">;
    out.push({ rowNumber: Number(rowNumbers[i]), source: parsed.source, problems: parsed.problems });
  });
  return out;
}

/**
 * A row by its sheet row number. The batch's order list holds its row keys in sheet order, so row
 * numbers rise along it: a binary search finds the row in about twenty look-ups, at any size, without
 * an index. A batch without a complete order list (recorded by an older version) uses an index built
 * once by one walk of its rows (row number → row key; rows are written once, so it never goes stale).
 */
export async function rowByNumber(
  store: BatchStore,
  batchId: string,
  rowNumber: number,
): Promise<RowRecord | undefined> {
  const redis = store.redis;
  const [listed, recorded] = await Promise.all([
    redis.llen(store.keys.order(batchId)),
    redis.hlen(store.keys.rows(batchId)),
  ]);
  if (listed === recorded) {
    let low = 0;
    let high = listed - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const rowKey = await redis.lindex(store.keys.order(batchId), middle);
      const record = rowKey ? await redis.hget(store.keys.rows(batchId), rowKey) : null;
      if (!rowKey || !record) break;
      const at = staticRowNumber(record);
      if (at === rowNumber) return store.getRow(batchId, rowKey);
      if (at < rowNumber) low = middle + 1;
      else high = middle - 1;
    }
    return undefined;
  }
  const indexKey = `${store.keys.batch(batchId)}:api:row-numbers`;
  if ((await redis.hget(indexKey, "complete")) !== "1") {
    let scan = "0";
    do {
      const [next, flat] = await redis.hscan(store.keys.rows(batchId), scan, "COUNT", 5000);
      const fields: string[] = [];
      for (let i = 0; i < flat.length; i += 2) {
        // The record starts with its row number: read it without parsing the whole JSON.
        fields.push(String(staticRowNumber(flat[i + 1]!)), flat[i]!);
      }
      if (fields.length > 0) await redis.hset(indexKey, ...fields);
      scan = next;
    } while (scan !== "0");
    await redis.hset(indexKey, "complete", "1");
  }
  const rowKey = await redis.hget(indexKey, String(rowNumber));
  return rowKey ? store.getRow(batchId, rowKey) : undefined;
}
