/** The delivery rules (rails, faster variants, the card-funded exemption): see rules.ts. */
export {
  allowedPreferences,
  CARD_CANNOT_PAY,
  CARD_NORMAL_SPEEDS,
  CARD_SUPERSEDED,
  deliveryRulesInWords,
  isFasterVariant,
  needsEligibilityCheck,
  RAIL_PREFERENCES,
  railOf,
  STANDARD_PREFERENCE,
  standardPreferenceFor,
} from "./rules.js";
