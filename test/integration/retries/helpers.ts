/** What the retries tests share: the reconcile worker's part done by polling, and editing a result file. */
import {
  adoptPayment,
  type BatchStore,
  type RowRecord,
  rowStateForPayment,
} from "../../../src/batches/index.js";
import type { PayoutsClient } from "../../../src/payouts-api/index.js";
import { externalIdFor } from "../../../src/row-identity/index.js";
import { until } from "../../support/wait.js";
import { paymentsOfBatch } from "../pipeline/helpers.js";

/**
 * What the reconcile worker does, done here by polling the sandbox: each row takes on the state of
 * its current attempt's payment. Resolves once `done` holds for every row.
 */
export async function followPayments(
  api: PayoutsClient,
  store: BatchStore,
  batchId: string,
  done: (rows: RowRecord[]) => boolean,
): Promise<RowRecord[]> {
  return until(
    "the rows to reach their payments' states",
    async () => {
      const payments = await paymentsOfBatch(api, batchId);
      for (const row of await store.listRows(batchId)) {
        const externalId = externalIdFor({
          batchId,
          rowNumber: row.rowNumber,
          reference: row.instruction.reference,
          attempt: row.attempt,
        });
        const payment = payments.find((p) => p.externalId === externalId);
        if (payment && row.state !== rowStateForPayment(payment.status)) {
          await adoptPayment(store, row, payment, "test reconcile");
        }
      }
      const rows = await store.listRows(batchId);
      return done(rows) ? rows : undefined;
    },
    30_000,
  );
}

/** Replaces one row's cells in a CSV result file (rows found by their reference in the first cell). */
export function editRow(csv: string, reference: string, edit: (cells: string[]) => void): string {
  return csv
    .split(/\r?\n/)
    .map((line) => {
      const cells = line.split(",");
      if (cells[0] !== reference) return line;
      edit(cells);
      return cells.join(",");
    })
    .join("\r\n");
}
