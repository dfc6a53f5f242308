/**
 * Error codes after which a row never gets a new attempt, whatever its state: an operator retry
 * refuses it (lua/start-new-attempt.lua), and src/retries tells the operator why.
 */
import { REFERENCE_REUSED } from "./adopt-payment.js";

/** A row canceled because its batch was rejected (src/approvals settles it): nobody approved paying it. */
export const APPROVAL_REJECTED = "APPROVAL_REJECTED";
/** A row canceled because nobody approved its batch in time. */
export const APPROVAL_EXPIRED = "APPROVAL_EXPIRED";

export const NEVER_RETRIED_CODES: readonly string[] = [REFERENCE_REUSED, APPROVAL_REJECTED, APPROVAL_EXPIRED];
