/**
 * Rows API benchmark (`npm run bench:api-rows`): records synthetic batches of 10,000 and 200,000 rows
 * (or `--sizes`) straight into the batch store on REDIS_URL, then times what the console asks for:
 * the first page, a state filter that matches almost nothing (the worst case: a full scan budget),
 * an exact reference, a row by number (first call builds the index, second uses it). Figures only;
 * the machine is shared, so expect noise. Keys are removed afterwards.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 node dist/bench/api-rows.js [--sizes 10000,200000]
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { pageRows, rowByNumber } from "../src/api/row-pages.js";
import { BatchStore, type SubmittedInstruction } from "../src/batches/index.js";
import { connectRedis } from "../src/pipeline/index.js";
import { achInstruction, deleteKeysUnder } from "./lib/sample-rows.js";

const { values } = parseArgs({ options: { sizes: { type: "string", default: "10000,200000" } } });
const sizes = values.sizes.split(",").map(Number);
const redis = connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { autoPipelining: true });

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await work();
  return [value, Math.round((performance.now() - started) * 10) / 10];
}

console.log(
  "rows      | record s | first page ms | state=failed ms (budget) | q=exact ms | row#: index build ms / then ms",
);
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
        chunk.push(achInstruction(i + 2, `REF-${i}`, `REF-${i}`, 10_000 + i));
      }
      await store.recordRows(batchId, chunk);
    }
  });
  const [, first] = await timed(() => pageRows(store, batchId, { limit: 100, filter: {} }));
  const [, failed] = await timed(() =>
    pageRows(store, batchId, { limit: 100, filter: { states: new Set(["failed"] as const) } }),
  );
  const [, exact] = await timed(() =>
    pageRows(store, batchId, { limit: 100, filter: { q: `REF-${n - 1}` } }),
  );
  const [, build] = await timed(() => rowByNumber(store, batchId, Math.floor(n / 2)));
  const [, again] = await timed(() => rowByNumber(store, batchId, n));
  console.log(
    `${String(n).padEnd(9)} | ${(recordMs / 1000).toFixed(1).padStart(8)} | ${String(first).padStart(13)} | ${String(failed).padStart(24)} | ${String(exact).padStart(10)} | ${build} / ${again}`,
  );
  await deleteKeysUnder(redis, prefix, 5000);
}
await redis.quit();
