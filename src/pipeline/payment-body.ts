/**
 * The POST /payments body of a row (pure). Built from the stored instruction, the stored quote and the
 * stored attachment id only, so every retry under a key rebuilds exactly the same body; its hash is
 * persisted before sending and checked on every later send under the same key (docs/design.md §3.2).
 */
import { createHash } from "node:crypto";
import type { PayoutInstruction } from "../intake/payout-instruction.js";
import { isFxDeliveryPreference, type PaymentCreate } from "../payouts-api/wire-types.js";

/** Whether the row's payment converts currency, so it needs an FX quote first. */
export function needsFxQuote(
  instruction: Pick<PayoutInstruction, "deliveryPreference" | "currency">,
): boolean {
  return (
    isFxDeliveryPreference(instruction.deliveryPreference) && instruction.currency.toUpperCase() !== "USD"
  );
}

export interface BodyParts {
  externalId: string;
  metadata: Record<string, string>;
  attachmentId: string | undefined;
  fxQuoteToken: string | undefined;
}

export function paymentBodyFor(instruction: PayoutInstruction, parts: BodyParts): PaymentCreate {
  const body: PaymentCreate = {
    amount: instruction.amount,
    originatingAccountId: instruction.originatingAccountId,
    receivingAccountId: instruction.receivingAccountId,
    deliveryPreference: instruction.deliveryPreference,
    currency: instruction.currency,
  };
  if (parts.fxQuoteToken !== undefined) body.fxQuoteToken = parts.fxQuoteToken;
  if (instruction.payerMemo) body.payerMemo = instruction.payerMemo;
  if (instruction.recipientNote) body.recipientNote = instruction.recipientNote;
  // The quote was minted with the same purpose (the spec: "send the same value used when quoting").
  if (instruction.purpose) body.compliance = { type: "goods-and-services", purpose: instruction.purpose };
  if (parts.attachmentId !== undefined) body.attachmentId = parts.attachmentId;
  body.externalId = parts.externalId;
  body.metadata = parts.metadata;
  return body;
}

/** sha256 of the body as the client serialises it (the same insertion order every time). */
export function bodyHash(body: PaymentCreate): string {
  return createHash("sha256").update(JSON.stringify(body)).digest("hex");
}
