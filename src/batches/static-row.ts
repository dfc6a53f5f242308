/**
 * A row's static record (redis-layout.ts `rows`: written once, replaced only by an operator's
 * correction), encoded compactly: a JSON array with the instruction's fields in a fixed order instead
 * of an object naming each, and without the row key and row number twice (the key is the hash field;
 * the number comes first). About 40% fewer bytes than the object form, for the biggest part of a
 * row's memory in Redis. Pure: no I/O.
 *
 *   [rowNumber, reference, originatingAccountId, receivingAccountId, amount, currency,
 *    deliveryPreference, deliveryResolvedFromBlank (0|1), payerMemo, recipientNote, purpose,
 *    attachment, metadata, source, contentKey]   (absent values as null; contentKey only when set)
 *
 * The source cells, when the batch's column keys (`SheetLayout.keys`) are given and name every cell
 * of the row, are a positional array in that order instead of an object repeating every column name
 * (null: the cell is absent), and a cell whose text is exactly one of the instruction's own strings
 * (reference, accounts, currency, delivery, memo, note, purpose, metadata values: most of a sheet's
 * text cells) is written as `[i]`, the index of that string in {@link sharedStrings}. About 45% fewer
 * bytes again for the bench's rows. A row whose cells name a column the keys do not (an operator's
 * correction, say) keeps the object form. Decoding a positional record needs the same keys.
 */
import type { PayoutInstruction } from "../intake/payout-instruction.js";
import type { SourceValues } from "./types.js";

export interface StaticRow {
  rowNumber: number;
  instruction: PayoutInstruction;
  source?: SourceValues;
}

type Encoded = [
  number,
  string | null,
  string,
  string,
  number,
  string,
  PayoutInstruction["deliveryPreference"],
  0 | 1,
  string | null,
  string | null,
  string | null,
  PayoutInstruction["attachment"] | null,
  Record<string, string>,
  SourceValues | PositionalCell[] | null,
  string?,
];

/** The instruction's strings a source cell may point at instead of repeating them, in a fixed order. */
function sharedStrings(i: PayoutInstruction): (string | undefined)[] {
  return [
    i.reference,
    i.originatingAccountId,
    i.receivingAccountId,
    i.currency,
    i.deliveryPreference,
    i.payerMemo,
    i.recipientNote,
    i.purpose,
    ...Object.values(i.metadata),
  ];
}

type PositionalCell = string | number | null | [number];

function positionalSource(
  source: SourceValues,
  keys: readonly string[],
  shared: readonly (string | undefined)[],
): PositionalCell[] | undefined {
  const known = new Set(keys);
  if (known.has("__proto__") || Object.keys(source).some((k) => !known.has(k))) return undefined;
  const cells = keys.map((key): PositionalCell => {
    if (!Object.hasOwn(source, key)) return null;
    const value = source[key]!;
    const at = typeof value === "string" && value.length > 2 ? shared.indexOf(value) : -1;
    return at >= 0 ? [at] : value;
  });
  while (cells.length > 0 && cells[cells.length - 1] === null) cells.pop();
  return cells;
}

function sourceFromPositional(
  cells: readonly PositionalCell[],
  keys: readonly string[] | undefined,
  shared: readonly (string | undefined)[],
): SourceValues {
  if (!keys) throw new Error("a positional static row record needs its batch's column keys to be read");
  const source: SourceValues = {};
  cells.forEach((cell, k) => {
    if (cell === null) return;
    const key = keys[k];
    if (key === undefined)
      throw new Error(`a static row record has a cell beyond its batch's ${keys.length} columns`);
    const value = Array.isArray(cell) ? shared[cell[0]] : cell;
    if (value === undefined)
      throw new Error(`a static row record points at a string its instruction does not have`);
    source[key] = value;
  });
  return source;
}

/**
 * The record of `row`; with `sourceKeys` (the batch's `SheetLayout.keys`) its cells in the positional
 * form when they fit it.
 */
export function encodeStaticRow(row: StaticRow, sourceKeys?: readonly string[]): string {
  const i = row.instruction;
  const positional =
    row.source && sourceKeys && sourceKeys.length > 0
      ? positionalSource(row.source, sourceKeys, sharedStrings(i))
      : undefined;
  const encoded: Encoded = [
    row.rowNumber,
    i.reference ?? null,
    i.originatingAccountId,
    i.receivingAccountId,
    i.amount,
    i.currency,
    i.deliveryPreference,
    i.deliveryResolvedFromBlank ? 1 : 0,
    i.payerMemo ?? null,
    i.recipientNote ?? null,
    i.purpose ?? null,
    i.attachment ?? null,
    i.metadata,
    positional ?? row.source ?? null,
  ];
  if (i.contentKey !== undefined) encoded.push(i.contentKey);
  return JSON.stringify(encoded);
}

/** Reads a record; `sourceKeys` (the batch's `SheetLayout.keys`) are needed for one in the positional form. */
export function decodeStaticRow(rowKey: string, text: string, sourceKeys?: readonly string[]): StaticRow {
  const parsed = JSON.parse(text) as Encoded;
  if (!Array.isArray(parsed)) throw new Error(`static row record of ${rowKey} is not in this layout's form`);
  const [rowNumber, reference, from, to, amount, currency, delivery, blank, memo, note, purpose] = parsed;
  const [attachment, metadata, cells, contentKey] = [parsed[11], parsed[12], parsed[13], parsed[14]];
  const instruction: PayoutInstruction = {
    rowNumber,
    rowKey,
    reference: reference ?? undefined,
    originatingAccountId: from,
    receivingAccountId: to,
    amount,
    currency,
    deliveryPreference: delivery,
    deliveryResolvedFromBlank: blank === 1,
    payerMemo: memo ?? undefined,
    recipientNote: note ?? undefined,
    purpose: purpose ?? undefined,
    attachment: attachment ?? undefined,
    metadata,
    ...(contentKey === undefined ? {} : { contentKey }),
  };
  const source = Array.isArray(cells)
    ? sourceFromPositional(cells, sourceKeys, sharedStrings(instruction))
    : cells;
  return { rowNumber, instruction, ...(source ? { source } : {}) };
}

const LEADING_NUMBER = /^\[(\d+)[,\]]/;

/** The row number of a static record, read from its start without parsing the rest. */
export function staticRowNumber(text: string): number {
  const m = LEADING_NUMBER.exec(text);
  if (m) return Number(m[1]);
  return (JSON.parse(text) as Encoded)[0];
}
