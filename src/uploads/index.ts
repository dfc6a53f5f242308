/**
 * Public face of uploads: sheets uploaded to the console or API with their attachment files, validated,
 * paged through (rows with problems first), mapped to our columns, corrected row by row, and turned
 * into the sheet that is submitted.
 */
export {
  AttachmentUploadError,
  MAX_ATTACHMENT_FILES,
  placeAttachments,
  safeRelativePath,
  unpackZip,
} from "./attachments.js";
export {
  type ColumnMapping,
  headerSetKey,
  MAPPABLE_COLUMNS,
  MappingError,
  MappingMemory,
} from "./column-mapping.js";
export { EditError, editRows, type RowEdit } from "./edit-rows.js";
export { writeSheetCopy } from "./sheet-copy.js";
export {
  type CurrencyTotal,
  DEFAULT_UPLOAD_KEEP,
  UPLOAD_ID_PATTERN,
  type UploadKeep,
  type UploadRecord,
  UploadStore,
} from "./upload-store.js";
export {
  applyMapping,
  type NewUpload,
  sheetHeaders,
  sheetToSubmit,
  type UploadContext,
  type UploadRowView,
  uploadRows,
  uploadRowViews,
  validateNewUpload,
} from "./uploads.js";
