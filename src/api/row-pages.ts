/**
 * Paging through a batch's rows without loading the batch (docs/design.md §3.9): the cursor walks the
 * batch's row hash with HSCAN, a bounded number of entries per request, so a page of a
 * 1,000,000-row batch costs about what a page of a 100-row batch costs. Pages come in the store's
 * order (sorted by row number within a page; a batch small enough for one scan comes out in sheet
 * order). With a filter a page may be short, even empty, while `nextCursor` is set: keep following it.
 *
 * `q` matches a row's reference or payment id (case-insensitive, prefix); an exact reference is found
 * at once on the first page.
 */
import { type BatchStore, type RowRecord, type RowState, staticRowNumber } from "../batches/index.js";
import { formatMinor } from "../money/index.js";

/** Entries read from the row hash per HSCAN call. */
const SCAN_COUNT = 500;
/** Entries looked at per request at most, whatever the filter (bounds the time of one request). */
const SCAN_BUDGET = 20_000;

export interface RowView {
  row: number;
  reference: string | null;
  amount: string;
  currency: string;
  state: RowState;
  paymentId: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  attempt: number;
  updatedAt: string;
}

export function rowView(r: RowRecord): RowView {
  let amount: string;
  try {
    amount = formatMinor(r.instruction.amount, r.instruction.currency);
  } catch {
    amount = String(r.instruction.amount);
  }
  return {
    row: r.rowNumber,
    reference: r.instruction.reference ?? null,
    amount,
    currency: r.instruction.currency,
    state: r.state,
    paymentId: r.paymentId ?? null,
    errorCode: r.errorCode ?? null,
    errorMessage: r.errorMessage ?? null,
    attempt: r.attempt,
    updatedAt: r.updatedAt,
  };
}

interface Cursor {
  /** HSCAN cursor the current scan chunk started at. */
  scan: string;
  /** Entries of that chunk already handed out or looked at. */
  skip: number;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(`${c.scan}.${c.skip}`).toString("base64url");
}

export function decodeCursor(text: string): Cursor | undefined {
  const m = /^(\d{1,20})\.(\d{1,6})$/.exec(Buffer.from(text, "base64url").toString("latin1"));
  return m ? { scan: m[1]!, skip: Number(m[2]) } : undefined;
}

export interface RowFilter {
  states?: ReadonlySet<RowState> | undefined;
  q?: string | undefined;
}

function matches(r: RowRecord, filter: RowFilter): boolean {
  if (filter.states && !filter.states.has(r.state)) return false;
  if (filter.q) {
    const q = filter.q.toLowerCase();
    const ref = (r.instruction.reference ?? r.rowKey).toLowerCase();
    const pay = (r.paymentId ?? "").toLowerCase();
    if (!ref.startsWith(q) && !r.rowKey.toLowerCase().startsWith(q) && !pay.startsWith(q)) return false;
  }
  return true;
}

/** Whether a row may match, from its key and two fields only (no row is read whole to be refused). */
function mayMatch(
  rowKey: string,
  state: string | null,
  paymentId: string | null,
  filter: RowFilter,
): boolean {
  if (filter.states && !filter.states.has(state as RowState)) return false;
  if (filter.q) {
    const q = filter.q.toLowerCase();
    if (!rowKey.toLowerCase().startsWith(q) && !(paymentId ?? "").toLowerCase().startsWith(q)) return false;
  }
  return true;
}

export async function pageRows(
  store: BatchStore,
  batchId: string,
  options: { limit: number; cursor?: Cursor | undefined; filter: RowFilter },
): Promise<{ data: RowView[]; nextCursor: string | null }> {
  const { limit, filter } = options;
  const rowsKey = store.keys.rows(batchId);
  const filtered = filter.states !== undefined || filter.q !== undefined;
  const picked: string[] = [];
  const found: RowRecord[] = [];
  let exact: string | undefined;
  if (filter.q && !options.cursor) {
    // An exact reference is a row key: one look-up, reported first and skipped by the scan below.
    const hit = (await store.rowsPage(batchId, [filter.q]))[0];
    if (hit && matches(hit, filter)) {
      found.push(hit);
      exact = hit.rowKey;
    }
  } else if (filter.q) {
    exact = filter.q;
  }
  let scan = options.cursor?.scan ?? "0";
  let skip = options.cursor?.skip ?? 0;
  let looked = 0;
  const finish = async (nextCursor: string | null) => {
    found.push(...(await store.rowsPage(batchId, picked)).filter((r) => matches(r, filter)));
    return { data: sorted(found), nextCursor };
  };
  for (;;) {
    // (HSCAN NOVALUES would spare the values, but needs Redis 7.4.)
    const [next, flat] = await store.redis.hscan(rowsKey, scan, "COUNT", SCAN_COUNT);
    const all = flat.filter((_, i) => i % 2 === 0);
    const keys = all.slice(skip);
    // With a filter, only state and payment id are read for each row looked at; whole rows are read
    // for the matches alone.
    let fields: ([string | null, string | null] | undefined)[] = [];
    if (filtered && keys.length > 0) {
      const pipeline = store.redis.pipeline();
      for (const k of keys) pipeline.hmget(store.keys.row(batchId, k), "state", "paymentId");
      fields = ((await pipeline.exec()) ?? []).map(([err, v]) =>
        err ? undefined : (v as [string | null, string | null]),
      );
    }
    for (let i = 0; i < keys.length; i++) {
      const rowKey = keys[i]!;
      looked++;
      const f = fields[i];
      if (rowKey !== exact && (!filtered || (f && mayMatch(rowKey, f[0], f[1], filter)))) picked.push(rowKey);
      if (found.length + picked.length >= limit) {
        const consumed = skip + i + 1;
        const done = consumed >= all.length && next === "0";
        const cursor = consumed >= all.length ? { scan: next, skip: 0 } : { scan, skip: consumed };
        return finish(done ? null : encodeCursor(cursor));
      }
    }
    if (next === "0") return finish(null);
    scan = next;
    skip = 0;
    if (looked >= SCAN_BUDGET) return finish(encodeCursor({ scan, skip: 0 }));
  }
}

function sorted(rows: RowRecord[]): RowView[] {
  return rows.sort((a, b) => a.rowNumber - b.rowNumber).map(rowView);
}

/**
 * A row by its sheet row number, through an index built once per batch (row number → row key; the
 * batch's rows are written once, so it never goes stale). Built on first use by one walk of the hash.
 */
export async function rowByNumber(
  store: BatchStore,
  batchId: string,
  rowNumber: number,
): Promise<RowRecord | undefined> {
  const indexKey = `${store.keys.batch(batchId)}:api:row-numbers`;
  const redis = store.redis;
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
