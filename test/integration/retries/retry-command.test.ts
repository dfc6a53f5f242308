/**
 * `payouts retry` as an operator runs it (the built CLI in a child process), against a real Redis and
 * the sandbox over loopback: only the failed row gets a new attempt (new key, externalId `-r2`), the
 * paid and in-flight rows are left alone with the reason, and the worker then pays the retried row.
 */

import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  instruction,
  type PipelineHarness,
  paymentsOfBatch,
  pipelineHarness,
  waitForRows,
} from "../pipeline/helpers.js";
import { spawnCli } from "../pipeline/processes.js";

let sandbox: RunningSandbox;
let h: PipelineHarness;

beforeAll(async () => {
  sandbox = await startSandbox({ clock: { toInProgressMs: 50, toFinalMs: 50 } });
  h = await pipelineHarness(sandbox, "retry");
});

afterAll(async () => {
  await h?.close();
  await sandbox?.close();
});

async function retry(args: string[]) {
  const p = spawnCli(["retry", ...args, "--redis-prefix", h.prefix], {
    REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    LOG_LEVEL: "warn",
  });
  const code = await p.exited;
  return { code, text: p.output.join("\n") };
}

describe("payouts retry", () => {
  it("starts a new attempt only for the failed row, says why the others were left alone, and the worker pays it", async () => {
    const failed = instruction();
    const paid = instruction();
    const inFlight = instruction();
    const batchId = await h.submit([failed, paid, inFlight]);
    // What the reconcile worker would record: one payment failed, one completed; the third is queued.
    expect((await h.store.changeRow(batchId, failed.rowKey, { to: "failed", note: "test" })).outcome).toBe(
      "ok",
    );
    expect((await h.store.changeRow(batchId, paid.rowKey, { to: "completed", note: "test" })).outcome).toBe(
      "ok",
    );

    const r = await retry([
      batchId,
      "--rows",
      `${failed.rowNumber},${paid.rowNumber}-${inFlight.rowNumber},999`,
    ]);
    expect(r.code, r.text).toBe(0);
    expect(r.text).toContain(
      `row ${failed.rowNumber}: retried as attempt 2 (externalId ${failed.reference}-r2)`,
    );
    expect(r.text).toMatch(new RegExp(`row ${paid.rowNumber}: left alone: already paid`));
    expect(r.text).toMatch(new RegExp(`row ${inFlight.rowNumber}: left alone: in flight \\(queued\\)`));
    expect(r.text).toContain("row 999: left alone: no such row");

    const row = await h.store.getRow(batchId, failed.rowKey);
    expect(row).toMatchObject({ state: "queued", attempt: 2 });

    await h.startWorker();
    // Sent once the row leaves `queued` (this harness runs no reconcile worker to follow it further).
    await waitForRows(h.store, batchId, (x) => x.state !== "queued");
    const payments = await paymentsOfBatch(h.api, batchId);
    // The retried row is paid under its new externalId; the paid row is not paid again.
    expect(payments.map((p) => p.externalId).sort()).toEqual(
      [`${failed.reference}-r2`, inFlight.reference].sort(),
    );

    const again = await retry([batchId, "--rows", String(paid.rowNumber)]);
    expect(again.code, again.text).toBe(1);
    expect(again.text).toContain("already paid");
    expect((await paymentsOfBatch(h.api, batchId)).length).toBe(2);
  });

  it("exits 1 when no row can be retried and 2 for an unknown batch or a bad --rows", async () => {
    const batchId = await h.submit([instruction()]);
    const nothing = await retry([batchId]);
    expect(nothing.code, nothing.text).toBe(1);
    expect(nothing.text).toContain("nothing to retry");

    const unknown = await retry(["b20260101T000000-00000000"]);
    expect(unknown.code).toBe(2);
    expect(unknown.text).toContain("no batch b20260101T000000-00000000");

    const bad = await retry([batchId, "--rows", "7-3"]);
    expect(bad.code).toBe(2);
    expect(bad.text).toContain("--rows");
  });
});
