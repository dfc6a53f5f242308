/** Submitting a sheet: validation, report, archive and batch, as one step shared by every entry point. */
export {
  type CurrencyTotals,
  DuplicateFileError,
  type SubmitSheetOptions,
  type SubmitSheetOutcome,
  submitSheet,
} from "./submit-sheet.js";
