import type { ZodType } from "zod";
import {
  DeliveryEstimate,
  type DeliveryEstimateRequest,
  FastPaymentEligibility,
  type FastPaymentEligibilityRequest,
  type FeeCalculatorRequest,
  FeeCalculatorResult,
  FxQuote,
  type FxQuoteRequest,
} from "../wire-types.js";
import type { ReadOptions, ResourceContext } from "./resource-context.js";

/** Calculators: POSTs that create nothing, so they need no Idempotency-Key and retry freely. */
export function toolsResource(ctx: ResourceContext) {
  const tool =
    <Req, Res>(path: string, schema: ZodType<Res>) =>
    (body: Req, opts: ReadOptions = {}): Promise<Res> =>
      ctx.requester.send({ method: "POST", path, body, schema, entityScoped: true, signal: opts.signal });
  return {
    /** A rate-locking quote for an `international-fx` payee in a non-USD currency. */
    fxQuote: tool<FxQuoteRequest, FxQuote>("/tools/fx-quote", FxQuote),
    feeCalculator: tool<FeeCalculatorRequest, FeeCalculatorResult>(
      "/tools/fee-calculator",
      FeeCalculatorResult,
    ),
    fastPaymentEligibility: tool<FastPaymentEligibilityRequest, FastPaymentEligibility>(
      "/tools/fast-payment-eligibility",
      FastPaymentEligibility,
    ),
    deliveryEstimate: tool<DeliveryEstimateRequest, DeliveryEstimate>(
      "/tools/delivery-estimate",
      DeliveryEstimate,
    ),
  };
}
