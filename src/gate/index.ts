/**
 * Public face of the gate (docs/design.md §3.14): the one function every path that creates or changes
 * what is paid goes through (validation, the approval policy, the audit entry), the rule that says
 * when a correction is a new instruction, and the identities of callers that are not people.
 */

export { cliCaller, inboxCaller, scheduleCaller } from "./callers.js";
export {
  correctionsAdmission,
  type GateAnswers,
  type GateCaller,
  type GateContext,
  type GateRequest,
  passGate,
} from "./gate.js";
export {
  auditedChanges,
  type CorrectedRow,
  type CorrectionJudgement,
  cellChanges,
  type FieldChange,
  INSTRUCTION_FIELDS,
  instructionChanges,
  judgeCorrection,
  MAX_AUDITED_CHANGES,
} from "./instruction-rule.js";
