/**
 * Public face of duplicates: rows that repeat (a reference used twice, the same money to the same payee
 * twice in a sheet or within the window across batches) and the content key of a row without a
 * reference. The checks are pure; the cross-batch index (Redis, rebuilt from the archive) is the I/O.
 */
export {
  type DuplicateClaim,
  DuplicateIndex,
  type DuplicateIndexOptions,
  type DuplicateLookup,
  type IndexedRow,
  type LookedUpRow,
} from "./duplicate-index.js";
export { type FirstUse, FirstUseIndex } from "./first-use-index.js";
export {
  type DuplicateMatch,
  describeMatch,
  type PaymentFields,
  POSSIBLE_DUPLICATE,
  paymentKeyOf,
  possibleDuplicateMessage,
  SheetDuplicates,
  type SheetRowCheck,
} from "./possible-duplicates.js";
