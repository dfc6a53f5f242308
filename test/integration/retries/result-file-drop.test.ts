/**
 * A batch's result file dropped back into inbox/ with corrections, with real files in a temporary
 * DATA_DIR, a real Redis (unique prefix), the sandbox over loopback and the real payment worker. One
 * row failed (sandbox amounts ending .13 fail) and the others were paid: the failed row, corrected,
 * is retried under a new attempt and paid; a correction of a paid row is refused and pays nothing;
 * an invalid correction is refused with its problem; the same file dropped again retries nothing.
 */
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isTerminalRowState } from "../../../src/batches/index.js";
import { writeResultFile } from "../../../src/results/index.js";
import { paymentsOfBatch } from "../pipeline/helpers.js";
import { dropFile } from "../watch/helpers.js";
import { editRow, followPayments, type RetryStack, startRetryStack } from "./helpers.js";

let stack: RetryStack;

beforeAll(async () => {
  stack = await startRetryStack("result-drop");
});

afterAll(async () => {
  await stack?.close();
});

describe("dropping a corrected result file into inbox/", () => {
  it("retries the corrected failed row and pays it, refuses the paid row's change, touches nothing else", async () => {
    const { api, pipeline, intake, dataDir } = stack;
    const tag = randomBytes(4).toString("hex");
    const [failing, paid, untouched] = ["F", "P", "U"].map((x) => `RD${tag}-${x}`) as [
      string,
      string,
      string,
    ];
    const sheet = [
      "reference,from_account,to_account,amount,currency,payer_memo",
      `${failing},ops-checking,vendor-ach,101.13,USD,fails in the sandbox`,
      `${paid},ops-checking,vendor-ach,202.00,USD,paid memo`,
      `${untouched},ops-checking,vendor-ach,303.00,USD,left as it is`,
      "",
    ].join("\r\n");
    await dropFile(intake.folders.inbox, "april.csv", sheet);
    const accepted = await intake.take(intake.folders.inbox, "april.csv");
    expect(accepted).toMatchObject({ kind: "accepted", rows: 3 });
    if (accepted.kind !== "accepted") return;
    const batchId = accepted.batchId;
    const store = pipeline.store;

    const settled = await followPayments(api, store, batchId, (rows) =>
      rows.every((r) => isTerminalRowState(r.state)),
    );
    expect(settled.map((r) => [r.rowKey, r.state])).toEqual([
      [failing, "failed"],
      [paid, "completed"],
      [untouched, "completed"],
    ]);

    const result = await writeResultFile(store, batchId, { dataDir });
    const resultName = path.basename(result.path);
    expect(resultName).toBe(`april.${batchId}.result.csv`);
    const original = await readFile(result.path, "utf8");

    // 1. A correction that does not validate: refused with its problem, nothing retried.
    const invalid = editRow(original, failing, (c) => {
      c[2] = "no-such-account";
    });
    await dropFile(intake.folders.inbox, resultName, invalid);
    const refused = await intake.take(intake.folders.inbox, resultName);
    expect(refused).toMatchObject({ kind: "rejected" });
    if (refused.kind !== "rejected") return;
    expect(refused.notePath).toMatch(/\.retry\.txt$/);
    const refusedReport = await readFile(refused.notePath, "utf8");
    expect(refusedReport).toContain(`reference ${failing}: REFUSED: the correction is invalid`);
    expect(refusedReport).toContain("no-such-account");
    expect((await store.getRow(batchId, failing))?.attempt).toBe(1);

    // 2. The failed row's amount corrected and the paid row's memo changed.
    const corrected = editRow(
      editRow(original, failing, (c) => {
        c[3] = "101.25";
      }),
      paid,
      (c) => {
        c[5] = "a memo changed after payment";
      },
    );
    await dropFile(intake.folders.inbox, resultName, corrected);
    const retried = await intake.take(intake.folders.inbox, resultName);
    expect(retried).toMatchObject({
      kind: "accepted",
      batchId,
      rows: 1,
      totals: { USD: { rows: 1, amount: 10125 } },
    });
    if (retried.kind !== "accepted") return;
    expect(path.dirname(retried.archivedAs)).toBe(intake.folders.archive);
    const report = await readFile(retried.retryReport!, "utf8");
    expect(report).toContain(
      `reference ${failing}: RETRIED: retried as attempt 2 (externalId ${failing}-r2) with the corrected "amount"`,
    );
    expect(report).toMatch(
      new RegExp(`reference ${paid}: REFUSED: "payer_memo" changed, but the row is already paid`),
    );
    expect(report).toMatch(new RegExp(`reference ${untouched}: left alone: unchanged; already paid`));
    expect(await readdir(intake.folders.inbox)).toEqual([]);

    const final = await followPayments(api, store, batchId, (rows) =>
      rows.every((r) => isTerminalRowState(r.state) && (r.rowKey !== failing || r.attempt === 2)),
    );
    const byKey = new Map(final.map((r) => [r.rowKey, r]));
    expect(byKey.get(failing)).toMatchObject({
      state: "completed",
      attempt: 2,
      instruction: { amount: 10125 },
      source: { amount: "101.25" },
    });
    // The refused memo change was not recorded: the paid row still shows what it was paid with.
    expect(byKey.get(paid)).toMatchObject({
      state: "completed",
      attempt: 1,
      source: { payer_memo: "paid memo" },
    });
    expect(byKey.get(untouched)).toMatchObject({ state: "completed", attempt: 1 });

    // The batch's money totals follow the correction: the paid total holds the new amount, not the old.
    const progress = await store.progress(batchId);
    expect(progress?.totals.USD).toEqual({ completed: 10125 + 20200 + 30300 });

    const payments = await paymentsOfBatch(api, batchId);
    const count = (externalId: string) => payments.filter((p) => p.externalId === externalId).length;
    expect(count(failing)).toBe(1);
    expect(count(`${failing}-r2`)).toBe(1);
    expect(payments.find((p) => p.externalId === `${failing}-r2`)?.amount).toBe(10125);
    expect(count(paid)).toBe(1);
    expect(count(untouched)).toBe(1);
    expect(payments).toHaveLength(4);

    // 3. The same corrected file again: the retried row is now paid and unchanged; nothing is retried.
    await dropFile(intake.folders.inbox, resultName, corrected);
    const again = await intake.take(intake.folders.inbox, resultName);
    expect(again).toMatchObject({ kind: "rejected" });
    if (again.kind !== "rejected") return;
    const againReport = await readFile(again.notePath, "utf8");
    expect(againReport).toContain("0 row(s) retried");
    expect(againReport).toMatch(new RegExp(`reference ${failing}: left alone: unchanged; already paid`));
    expect(await paymentsOfBatch(api, batchId)).toHaveLength(4);

    // 4. The current result as XLSX, dropped back unchanged: every row reads back as recorded.
    const xlsx = await writeResultFile(store, batchId, { dataDir, format: "xlsx" });
    const xlsxName = path.basename(xlsx.path);
    await dropFile(intake.folders.inbox, xlsxName, await readFile(xlsx.path));
    const unchanged = await intake.take(intake.folders.inbox, xlsxName);
    expect(unchanged).toMatchObject({ kind: "rejected" });
    if (unchanged.kind !== "rejected") return;
    expect(await readFile(unchanged.notePath, "utf8")).toContain(
      "0 row(s) retried, 0 refused, 3 left alone.",
    );
    expect(await paymentsOfBatch(api, batchId)).toHaveLength(4);
  });

  it("refuses a result file whose name carries no batch this service knows, paying nothing", async () => {
    const { intake } = stack;
    const header = [
      "reference,from_account,to_account,amount",
      "status,payment_id,payment_status,debit_usd,fx_rate,error_code,error_message,attempt,idempotency_key,updated_at",
    ].join(",");
    const name = "march.b20200101T000000-00000000.result.csv";
    await dropFile(
      intake.folders.inbox,
      name,
      `${header}\r\nX-1,ops-checking,vendor-ach,1.00,failed,,,,,,,1,,\r\n`,
    );
    const outcome = await intake.take(intake.folders.inbox, name);
    expect(outcome).toMatchObject({ kind: "rejected", reason: expect.stringContaining("no batch") });
    if (outcome.kind !== "rejected") return;
    expect(await readFile(outcome.notePath, "utf8")).toContain("nothing was retried");
  });
});
