/**
 * Rows API benchmark (`npm run bench:api-rows`): records synthetic batches of 20,000 and 1,000,000 rows
 * (or `--sizes`) straight into the batch store on REDIS_URL, then times what the console asks for
 * (src/api/row-scan.ts): the first page, a jump deep into the batch, a state filter that matches a few
 * rows spread through it, a search by part of a reference, by an amount and by an error code (each
 * followed to the end of the batch, request after request, as the console does), and a row by number.
 * A search costs requests of at most REQUEST_BUDGET rows each; its figure is the sum over all of them,
 * with the slowest single request beside it. Figures only; the machine is shared, so expect noise.
 * Keys are removed afterwards. Use a Redis of your own for a million rows (about 400 MB):
 *
 *   redis-server --port 6390 --save '' & REDIS_URL=redis://127.0.0.1:6390 node dist/bench/api-rows.js
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { rowByNumber } from "../src/api/row-views.js";
import {
  BatchStore,
  type RowQuery,
  rowsOfPage,
  type SubmittedInstruction,
  scanRows,
} from "../src/batches/index.js";
import { connectRedis } from "../src/pipeline/index.js";
import { achInstruction, deleteKeysUnder } from "./lib/sample-rows.js";

const { values } = parseArgs({ options: { sizes: { type: "string", default: "20000,1000000" } } });
const sizes = values.sizes.split(",").map(Number);
const redis = connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { autoPipelining: true });

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await work();
  return [value, Math.round((performance.now() - started) * 10) / 10];
}

/** Follows a filtered listing to its end: total ms, slowest request ms, requests, matches. */
async function followed(store: BatchStore, batchId: string, query: RowQuery) {
  let total = 0;
  let slowest = 0;
  let requests = 0;
  let matches = 0;
  let cursor = query.cursor;
  for (;;) {
    const [page, ms] = await timed(async () => {
      const found = await scanRows(store, batchId, { ...query, cursor });
      await rowsOfPage(store, batchId, found);
      return found;
    });
    total += ms;
    slowest = Math.max(slowest, ms);
    requests++;
    matches += page.keys.length;
    if (!page.next || matches >= query.limit) break;
    cursor = page.next;
  }
  return `${Math.round(total)} (${requests} req, max ${Math.round(slowest)}, ${matches} hits)`;
}

const header = [
  "rows",
  "record s",
  "first page ms",
  "jump to 90% ms",
  "state=rejected ms",
  "q=part of a ref ms",
  "q=amount ms",
  "q=error code ms",
  "row by number ms (deep / last)",
];
console.log(header.join(" | "));
for (const n of sizes) {
  const prefix = `bench-api-rows-${randomBytes(3).toString("hex")}`;
  const store = new BatchStore(redis, { prefix });
  const batchId = "bench_rows";
  await store.createBatch({
    id: batchId,
    fileSha256: "0",
    sourceName: "bench.csv",
    entityId: "me",
    createdAt: new Date().toISOString(),
    rowCount: n,
    invalidCount: 0,
    rowsRecorded: false,
    enqueueComplete: true,
    archivePath: undefined,
    sheet: { columns: [], keys: [], format: "csv" },
  });
  const [, recordMs] = await timed(async () => {
    for (let start = 0; start < n; start += 10_000) {
      const chunk: SubmittedInstruction[] = [];
      for (let i = start; i < Math.min(n, start + 10_000); i++) {
        chunk.push(achInstruction(i + 2, `REF-${i}`, `REF-${i}`, 10_000 + (i % 50_000)));
      }
      await store.recordRows(batchId, chunk);
    }
  });
  await store.markRowsRecorded(batchId);
  // Five rejected rows spread through the batch, one with a rare error code.
  for (const k of [1, 3, 5, 7, 9]) {
    await store.changeRow(batchId, `REF-${Math.floor((n * k) / 10)}`, {
      to: "rejected",
      fields: { errorCode: k === 9 ? "ATTACHMENT_REQUIRED" : "VALIDATION_ERROR", errorMessage: "bench" },
    });
  }
  // A page as the API serves it: the keys, then the rows themselves.
  const page = async (query: RowQuery) => rowsOfPage(store, batchId, await scanRows(store, batchId, query));
  const [, first] = await timed(() => page({ limit: 100 }));
  const [, jump] = await timed(() => page({ limit: 100, offset: Math.floor(n * 0.9) }));
  const rejected = await followed(store, batchId, { limit: 100, states: new Set(["rejected"]) });
  const part = await followed(store, batchId, { limit: 100, q: `ref-${Math.floor(n * 0.95)}` });
  const amount = await followed(store, batchId, { limit: 100, q: "100.07" });
  const code = await followed(store, batchId, { limit: 100, q: "attachment_required" });
  const [, build] = await timed(() => rowByNumber(store, batchId, Math.floor(n / 2)));
  const [, again] = await timed(() => rowByNumber(store, batchId, n));
  console.log(
    [n, (recordMs / 1000).toFixed(1), first, jump, rejected, part, amount, code, `${build} / ${again}`].join(
      " | ",
    ),
  );
  await deleteKeysUnder(redis, prefix, 5000);
}
await redis.quit();
