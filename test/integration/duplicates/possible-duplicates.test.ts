/**
 * The same money twice is held for a person, and a copy of a paid sheet pays nothing again: real
 * Redis (a unique prefix), the sandbox over HTTP, the payment worker, `submitSheet` as every
 * submitting path uses it.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditTrail } from "../../../src/audit/index.js";
import { createPayoutsClient, type PayoutsClient } from "../../../src/payouts-api/index.js";
import { type SubmitSheetOptions, submitSheet } from "../../../src/submission/index.js";
import { PIPELINE_DEFAULTS } from "../../support/settings.js";
import {
  type PipelineHarness,
  paymentsOfBatch,
  pipelineHarness,
  REDIS_URL,
  waitForRows,
} from "../pipeline/helpers.js";

let sandbox: RunningSandbox;
let client: PayoutsClient;
let h: PipelineHarness;
let dir: string;
let sheets = 0;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, clock: { toInProgressMs: 600_000, toFinalMs: 600_000 } });
  client = createPayoutsClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: sandbox.entityId });
  h = await pipelineHarness(sandbox, "duplicates");
  await h.startWorker();
  dir = await mkdtemp(path.join(tmpdir(), "payouts-duplicates-"));
});

afterAll(async () => {
  await h.close();
  await client.close();
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

async function sheet(text: string, extension = "csv"): Promise<string> {
  const file = path.join(dir, `sheet-${++sheets}.${extension}`);
  await writeFile(file, text);
  return file;
}

/** `duplicateWindowDays`: PAYOUTS_DUPLICATE_WINDOW_DAYS of this submission (default 0). */
function submit(
  sheetPath: string,
  { duplicateWindowDays = 0, ...extra }: Partial<SubmitSheetOptions> & { duplicateWindowDays?: number } = {},
) {
  return submitSheet({
    sheetPath,
    api: client,
    pipeline: {
      ...PIPELINE_DEFAULTS,
      duplicateWindowDays,
      redisUrl: REDIS_URL,
      prefix: h.prefix,
      dataDir: h.dataDir,
    },
    entityId: "me",
    ...extra,
  });
}

async function submitted(
  sheetPath: string,
  extra: Partial<SubmitSheetOptions> & { duplicateWindowDays?: number } = {},
): Promise<string> {
  const outcome = await submit(sheetPath, extra);
  if (outcome.kind !== "submitted") throw new Error(`not submitted: ${outcome.kind}`);
  return outcome.batchId;
}

/** A cent amount no other test of this file uses, so each test's payments are its own. */
let cents = 1000;
const amount = () => `${(++cents / 100 + 500).toFixed(2)}`;

describe("a sheet without references, paid, then saved again", () => {
  it("with CRLF line ends and its columns in another order pays nothing again", async () => {
    const [a, b] = [amount(), amount()];
    const first = await submitted(
      await sheet(
        [
          "from_account,to_account,amount,currency,payer_memo",
          `ops-checking,vendor-ach,${a},USD,rent`,
          `ops-checking,vendor-check,${b},USD,`,
          // The same payment twice is two payments once a person confirmed it.
          `ops-checking,vendor-check,${b},USD,`,
        ].join("\n"),
      ),
      { allowPossibleDuplicates: true },
    );
    const paid = await waitForRows(h.store, first, (r) => r.paymentId !== undefined);
    expect(new Set(paid.map((r) => r.paymentId)).size).toBe(3);

    const again = await submitted(
      await sheet(
        [
          "amount,currency,to_account,from_account,payer_memo",
          `${b},USD,vendor-check,ops-checking,`,
          `${a},USD,vendor-ach,ops-checking,rent`,
          `${b},USD,vendor-check,ops-checking,`,
          "",
        ].join("\r\n"),
      ),
      { allowPossibleDuplicates: true },
    );
    const rows = await waitForRows(h.store, again);
    expect(rows.map((r) => [r.state, r.errorCode])).toEqual([
      ["rejected", "REFERENCE_REUSED"],
      ["rejected", "REFERENCE_REUSED"],
      ["rejected", "REFERENCE_REUSED"],
    ]);
    expect(await paymentsOfBatch(client, again)).toEqual([]);
  });
});

describe("the same payee and amount twice in one sheet", () => {
  it("is flagged naming the other row and paid only when a person confirms it, which is audited", async () => {
    const same = amount();
    const file = await sheet(
      [
        "reference,from_account,to_account,amount,currency",
        `DUP-A-${cents},ops-checking,vendor-ach-2,${same},USD`,
        `DUP-B-${cents},ops-checking,vendor-ach-2,${same},USD`,
      ].join("\n"),
    );
    const refused = await submit(file);
    expect(refused.kind).toBe("invalid");
    expect(refused.summary.problems).toEqual([
      {
        row: 3,
        column: "amount",
        code: "POSSIBLE_DUPLICATE",
        message: expect.stringMatching(
          new RegExp(`as row 2 \\(reference DUP-A-${cents}\\).*--allow-possible-duplicates`),
        ),
      },
    ]);

    const outcome = await submit(file, { allowPossibleDuplicates: true, submittedBy: "cli:controller" });
    if (outcome.kind !== "submitted") throw new Error(outcome.kind);
    expect(outcome.possibleDuplicates).toBe(1);
    const rows = await waitForRows(h.store, outcome.batchId, (r) => r.paymentId !== undefined);
    expect(new Set(rows.map((r) => r.paymentId)).size).toBe(2);
    const { data: entries } = await new AuditTrail(h.pipeline.redis, h.prefix).list({ limit: 100 });
    expect(entries).toContainEqual(
      expect.objectContaining({
        action: "batch.duplicates-confirmed",
        target: outcome.batchId,
        actor: { kind: "cli", name: "controller" },
        detail: expect.objectContaining({ count: 1, rows: [3] }),
      }),
    );
  });
});

describe("the same payment as a row of an earlier batch within the window", () => {
  it("is flagged naming that batch, row, reference and payment, also after Redis lost the index", async () => {
    const same = amount();
    const earlier = await submitted(
      await sheet(
        [
          "reference,from_account,to_account,amount,currency",
          `WIN-1-${cents},ops-checking,vendor-wire,${same},USD`,
        ].join("\n"),
      ),
      { duplicateWindowDays: 30 },
    );
    const [paid] = await waitForRows(h.store, earlier, (r) => r.paymentId !== undefined);
    const later = await sheet(
      [
        "reference,from_account,to_account,amount,currency",
        `WIN-2-${cents},ops-checking,vendor-wire,${same},USD`,
      ].join("\n"),
    );
    const expected = `row 2 (reference WIN-1-${cents}) of batch ${earlier}`;

    const refused = await submit(later, { duplicateWindowDays: 30 });
    expect(refused.kind).toBe("invalid");
    expect(refused.summary.problems.map((p) => p.code)).toEqual(["POSSIBLE_DUPLICATE"]);
    expect(refused.summary.problems[0]!.message).toContain(expected);
    expect(refused.summary.problems[0]!.message).toContain(`payment ${paid!.paymentId}`);

    // Redis loses the index: it is rebuilt from the archive on disk before the next check.
    const keys = await h.pipeline.redis.keys(`${h.prefix}:dup:*`);
    expect(keys.length).toBeGreaterThan(0);
    await h.pipeline.redis.del(...keys);
    const again = await submit(later, { duplicateWindowDays: 30 });
    expect(again.kind).toBe("invalid");
    expect(again.summary.problems[0]!.message).toContain(expected);
    expect(await h.pipeline.redis.exists(`${h.prefix}:dup:built`)).toBe(1);

    // Outside the window (0: the check is off) the row is paid.
    expect((await submit(later, { duplicateWindowDays: 0 })).kind).toBe("submitted");
  });
});
