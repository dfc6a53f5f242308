import { setFlagsFromString } from "node:v8";

/**
 * For commands that stream a whole sheet (`validate`, `submit`) and the long-running `worker`,
 * `serve`, `sandbox` and `demo`, whose live heap is small but which allocate per row and per delivery: have V8 collect the old generation
 * when it has grown by half its live size, instead of letting it reach about four times that. These
 * commands keep ~50 MB live whatever the sheet's length, but allocate a lot of short-lived rows that
 * outlive a scavenge or two; with V8's default growth the garbage between two full collections took a
 * 1M-row validate to 307 MB RSS and a 100k-row submit to 311 MB. With this: about 200 MB, at no
 * measurable cost in time (figures in docs/performance.md). `worker` and
 * `serve` in a 10k-row bench:e2e: 249 → 171 MB and 229 → 162 MB peak RSS, CPU per row unchanged
 * within the noise; at 1M rows the worker had reached 318 MB without it. The sandbox at 400k payments
 * in bench:e2e: 583 → 424 MB, 0.39 → 0.42 s of CPU per 1,000 rows (its payments are in typed arrays,
 * off the heap).
 * V8 reads this flag each time it sizes the heap, so setting it after start-up takes effect.
 */
export function keepHeapLean(): void {
  setFlagsFromString("--heap-growing-percent=50");
}
