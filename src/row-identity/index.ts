/** Public face of row identity: pure functions deriving a row's key, externalId and payment metadata. */
export {
  assertBatchId,
  attachmentKeyFor,
  BATCH_ID_PATTERN,
  BATCH_ID_SOURCE,
  contentKeyFor,
  externalIdFor,
  fileKeyFor,
  idempotencyKeyFor,
  MetadataLimitError,
  metadataNamesRow,
  PAYOUTS_KEY_NAMESPACE,
  paymentMetadataFor,
  type RowContent,
  type RowIdentity,
  rowMetadataValue,
} from "./row-identity.js";
export { uuidV5 } from "./uuid-v5.js";
