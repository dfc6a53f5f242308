/** Public face of errors: the one root every deliberate error extends, and its two mappings. */
export { type ErrorKind, exitCodeOf, httpStatusOf, PayoutsError } from "./payouts-error.js";
