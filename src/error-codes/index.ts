/** Public face of the error-code table: a plain sentence and a next step for every code. */
export {
  type ErrorHelp,
  errorHelp,
  isKnownErrorCode,
  KNOWN_ERROR_CODES,
  plainErrorMessage,
} from "./error-codes.js";
