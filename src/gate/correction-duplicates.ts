/**
 * Possible duplicates among corrected rows (docs/design.md §3.13, §3.14): a correction that changes
 * what a row pays (paying account, payee, amount, currency) is asked of the cross-batch index like a
 * new sheet's row, and of the other rows corrected with it. A row that would then pay what another
 * row pays is refused unless a person confirmed it; a correction let through is recorded in the index
 * under its batch, so a later sheet paying the same money is flagged in its turn.
 *
 * With the duplicate window off (PAYOUTS_DUPLICATE_WINDOW_DAYS=0) there is no index: only the rows
 * corrected together are held against each other, as a sheet's rows are against each other.
 */
import type { BatchRecord, RowRecord } from "../batches/index.js";
import {
  type DuplicateIndex,
  type DuplicateMatch,
  POSSIBLE_DUPLICATE,
  paymentKeyOf,
  possibleDuplicateMessage,
} from "../duplicates/index.js";
import type { PayoutInstruction } from "../intake/index.js";

export interface CorrectedPayment {
  row: RowRecord;
  /** The row as corrected. */
  instruction: PayoutInstruction;
}

export interface CorrectionDuplicates {
  /** Row key → why it is refused (unconfirmed possible duplicates). */
  refused: Map<string, string>;
  /** Rows paid although they are possible duplicates, because a person confirmed them (batch row numbers). */
  confirmed: number[];
}

/**
 * Which corrected rows are possible duplicates, and which of them a person confirmed (`allow`); the
 * rows let through are recorded in the index (held for approval too: a later sheet is flagged even
 * while they wait, a person deciding rather than money paid unseen).
 */
export async function checkCorrectionDuplicates(
  index: DuplicateIndex | undefined,
  batch: BatchRecord,
  corrected: readonly CorrectedPayment[],
  allow: boolean,
): Promise<CorrectionDuplicates> {
  const answer: CorrectionDuplicates = { refused: new Map(), confirmed: [] };
  const moved = corrected
    .map((c) => ({ ...c, key: paymentKeyOf(c.instruction) }))
    .filter((c) => c.key !== paymentKeyOf(c.row.instruction));
  if (moved.length === 0) return answer;

  // Looked up and recorded in one step: of two corrections (or a correction and a sheet) paying the
  // same money at the same time, the later sees the earlier. Without an index, only the rows
  // corrected together are held against each other.
  const firstOfKey = new Map<string, RowRecord>();
  const asked = moved.map((c) => {
    const earlier = firstOfKey.get(c.key);
    if (!earlier) firstOfKey.set(c.key, c.row);
    return { ...c, earlier };
  });
  const found = index
    ? await index.claimCorrections(
        batch.id,
        batch.createdAt,
        asked.map((c) => ({ row: c.instruction, paymentKey: c.key, earlierInSheet: false })),
        allow,
      )
    : [];
  for (const [i, c] of asked.entries()) {
    const matches = [...(found[i] ?? [])];
    if (!index && c.earlier) {
      matches.push({
        batchId: batch.id,
        rowNumber: c.earlier.rowNumber,
        reference: c.earlier.instruction.reference,
      });
    }
    if (matches.length === 0) continue;
    if (allow) answer.confirmed.push(c.row.rowNumber);
    else answer.refused.set(c.row.rowKey, refusal(c.instruction, matches));
  }
  return answer;
}

function refusal(row: PayoutInstruction, matches: readonly DuplicateMatch[]): string {
  return (
    `not retried: ${POSSIBLE_DUPLICATE}: as corrected, ` +
    possibleDuplicateMessage(
      row,
      matches,
      '"pay possible duplicates" in the console\'s correction (API: allowPossibleDuplicates)',
    )
  );
}
