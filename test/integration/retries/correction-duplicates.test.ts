/**
 * Corrected rows are held against what recent batches pay (docs/design.md §3.13, §3.14), with the
 * duplicate window on (30 days), real files, a real Redis (unique prefix), the sandbox over loopback
 * and the real payment worker:
 *
 * - a failed row corrected (result file dropped back) to the money another batch paid is refused
 *   with POSSIBLE_DUPLICATE naming that row, and nothing is sent;
 * - two rows of one dropped file corrected to the same money: the second is refused, naming the first;
 * - in the console (the gate's correct-row), the same correction is refused unless a person confirms
 *   it; confirmed, it is paid and the confirmation is in the audit trail;
 * - a correction let through is recorded in the index: a later sheet paying the corrected money is
 *   refused by the watched folder as a possible duplicate of the corrected row.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditTrail } from "../../../src/audit/index.js";
import { isTerminalRowState } from "../../../src/batches/index.js";
import { passGate } from "../../../src/gate/index.js";
import { writeResultFile } from "../../../src/results/index.js";
import { paymentsOfBatch } from "../pipeline/helpers.js";
import { editRow, followPayments, type RetryStack, startRetryStack } from "./helpers.js";

let stack: RetryStack;
const HEADER = "reference,from_account,to_account,amount,currency,payer_memo";

beforeAll(async () => {
  stack = await startRetryStack("correct-dup", { duplicateWindowDays: 30 });
});

afterAll(async () => {
  await stack?.close();
});

/** Submits a sheet through the watched folder and waits until every row is final. */
async function paidBatch(name: string, rows: string[]): Promise<string> {
  const { api, pipeline, dropAndTake } = stack;
  const accepted = await dropAndTake(name, `${[HEADER, ...rows].join("\r\n")}\r\n`);
  expect(accepted, JSON.stringify(accepted)).toMatchObject({ kind: "accepted", rows: rows.length });
  if (accepted.kind !== "accepted") throw new Error("not accepted");
  await followPayments(api, pipeline.store, accepted.batchId, (all) =>
    all.every((r) => isTerminalRowState(r.state)),
  );
  return accepted.batchId;
}

const consoleUser = { kind: "user" as const, name: "clerk", role: "operator" };

describe("a corrected row that would pay what another row pays", () => {
  it("is refused from a dropped result file, naming the other row; the second of two alike names the first", async () => {
    const { api, pipeline, dataDir, dropAndTake } = stack;
    const tag = randomBytes(4).toString("hex");
    const paidRef = `PD${tag}`;
    // Amounts are unique to this test: the index spans every batch of the prefix.
    const earlier = await paidBatch(`earlier-${tag}.csv`, [
      `${paidRef},ops-checking,vendor-ach,41.27,USD,paid`,
    ]);
    const [a, b, c] = ["A", "B", "C"].map((x) => `FD${tag}-${x}`) as [string, string, string];
    const failing = await paidBatch(`failing-${tag}.csv`, [
      `${a},ops-checking,vendor-ach,5.13,USD,fails`,
      `${b},ops-checking,vendor-ach,6.13,USD,fails`,
      `${c},ops-checking,vendor-ach,7.13,USD,fails`,
    ]);
    expect((await pipeline.store.listRows(failing)).map((r) => r.state)).toEqual([
      "failed",
      "failed",
      "failed",
    ]);

    const result = await writeResultFile(pipeline.store, failing, { dataDir });
    let csv = await readFile(result.path, "utf8");
    csv = editRow(csv, a, (cells) => {
      cells[3] = "41.27"; // what the earlier batch paid vendor-ach
    });
    csv = editRow(csv, b, (cells) => {
      cells[3] = "42.27";
    });
    csv = editRow(csv, c, (cells) => {
      cells[3] = "42.27"; // the same money as B, corrected with it
    });
    const dropped = await dropAndTake(path.basename(result.path), csv);
    expect(dropped).toMatchObject({ kind: "accepted", batchId: failing, rows: 1 });
    if (dropped.kind !== "accepted") return;
    const report = await readFile(dropped.retryReport!, "utf8");
    const lineOf = (ref: string) => report.split("\n").find((l) => l.includes(`reference ${ref}`)) ?? "";
    expect(lineOf(a)).toContain("POSSIBLE_DUPLICATE");
    expect(lineOf(a)).toContain(`row 2 (reference ${paidRef}) of batch ${earlier}`);
    expect(lineOf(b)).not.toContain("POSSIBLE_DUPLICATE");
    expect(lineOf(c)).toContain("POSSIBLE_DUPLICATE");
    expect(lineOf(c)).toContain(`row 3 (reference ${b}) of batch ${failing}`);

    // Only B started a new attempt; A and C are still their failed first attempts, nothing sent for them.
    const rows = await followPayments(api, pipeline.store, failing, (all) =>
      all.every((r) => isTerminalRowState(r.state) && (r.instruction.reference !== b || r.attempt === 2)),
    );
    expect(rows.map((r) => [r.instruction.reference, r.attempt, r.instruction.amount])).toEqual([
      [a, 1, 513],
      [b, 2, 4227],
      [c, 1, 713],
    ]);
    const externalIds = (await paymentsOfBatch(api, failing)).map((p) => p.externalId).sort();
    expect(externalIds).toEqual([a, b, `${b}-r2`, c].sort());
  });

  it("is refused in the console unless confirmed; confirmed, it is paid and audited; later sheets see it", async () => {
    const { api, pipeline, prefix, dropAndTake } = stack;
    const tag = randomBytes(4).toString("hex");
    const paidRef = `PC${tag}`;
    const earlier = await paidBatch(`paid-${tag}.csv`, [`${paidRef},ops-checking,vendor-ach,51.27,USD,paid`]);
    const failRef = `FC${tag}`;
    const failing = await paidBatch(`fail-${tag}.csv`, [`${failRef},ops-checking,vendor-ach,9.13,USD,fails`]);
    const batch = (await pipeline.store.getBatch(failing))!;
    const correct = async (allowPossibleDuplicates: boolean) =>
      passGate(
        { actor: consoleUser, from: "127.0.0.1", pipeline },
        {
          kind: "correct-row",
          correct: {
            api,
            batch,
            row: (await pipeline.store.getRow(failing, failRef))!,
            edits: { amount: "51.27" },
          },
          allowPossibleDuplicates,
        },
      );

    const refused = await correct(false);
    expect(refused.outcome).toBe("refused");
    expect(refused.detail).toContain("POSSIBLE_DUPLICATE");
    expect(refused.detail).toContain(`row 2 (reference ${paidRef}) of batch ${earlier}`);
    expect(await pipeline.store.getRow(failing, failRef)).toMatchObject({ state: "failed", attempt: 1 });

    const confirmed = await correct(true);
    expect(confirmed).toMatchObject({ outcome: "retried", attempt: 2 });
    const [paid] = await followPayments(api, pipeline.store, failing, (all) =>
      all.every((r) => r.attempt === 2 && isTerminalRowState(r.state)),
    );
    expect(paid).toMatchObject({ state: "completed", instruction: { amount: 5127 } });
    const { data } = await new AuditTrail(pipeline.redis, prefix).list({ limit: 500 });
    const trail = data.filter((e) => e.target === failing || e.target === `${failing}/2`);
    expect(trail.find((e) => e.action === "batch.duplicates-confirmed")).toMatchObject({
      actor: { name: "clerk" },
      detail: { via: "console", rows: [2] },
    });
    expect(trail.filter((e) => e.action === "rows.correct").map((e) => e.outcome)).toEqual(
      expect.arrayContaining(["denied", "ok"]),
    );

    // The corrected money is in the index: a new sheet paying it again is a possible duplicate of it.
    const again = await dropAndTake(
      `again-${tag}.csv`,
      `${HEADER}\r\nAG${tag},ops-checking,vendor-ach,51.27,USD,x\r\n`,
    );
    expect(again.kind).toBe("rejected");
    const note = again.kind === "rejected" ? await readFile(again.notePath!, "utf8") : "";
    expect(note).toContain("POSSIBLE_DUPLICATE");
    expect(note).toContain(`of batch ${failing}`);
  });
});
