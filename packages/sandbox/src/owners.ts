/**
 * Beneficial owners and limitations. `validateOwnerSet` holds every replacement rule (pure);
 * `computeLimitations` derives the entity's capabilities from its owners and seed restrictions.
 */

import type { FieldIssue } from "./errors.js";
import type { SeedRestriction } from "./seed.js";
import type { StoredOwner } from "./state.js";
import type { BeneficialOwner, BeneficialOwnerInput, Capability, Limitations } from "./wire.js";
import { KNOWN_OPERATIONS } from "./wire.js";

const PO_BOX = /\bp\.?\s*o\.?\s*box\b|\bpost\s+office\s+box\b/i;
export const SOLE_PROPRIETORSHIP = "sole-proprietorship";

export interface OwnerSetContext {
  businessType: string;
  existing: readonly StoredOwner[];
  /** Whether an attachment id belongs to this entity. */
  attachmentExists(id: string): boolean;
}

/**
 * Every rule of the beneficial-owner replacement. Returns the field issues, each naming the person
 * index (`data.<i>.<field>`); an empty list means the set is valid.
 */
export function validateOwnerSet(
  people: readonly BeneficialOwnerInput[],
  ctx: OwnerSetContext,
): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const existingById = new Map(ctx.existing.map((o) => [o.owner.id, o]));
  const seenIds = new Set<number>();
  let fxHolders = 0;
  let uboTotal = 0;
  people.forEach((p, i) => {
    const at = (field: string) => `data.${i}.${field}`;
    const previous = p.id !== undefined ? existingById.get(p.id) : undefined;
    if (p.id !== undefined) {
      if (!previous) issues.push({ path: at("id"), message: `no beneficial owner with id ${p.id} exists` });
      if (seenIds.has(p.id)) issues.push({ path: at("id"), message: `id ${p.id} appears more than once` });
      seenIds.add(p.id);
    }
    if (p.types.includes("fx-account-holder")) fxHolders++;
    if (p.types.includes("ubo")) {
      if (p.ownershipPercentage === undefined) {
        issues.push({ path: at("ownershipPercentage"), message: "required for a ubo" });
      } else {
        uboTotal += p.ownershipPercentage;
      }
    }
    if (PO_BOX.test(p.address.line1)) {
      issues.push({ path: at("address.line1"), message: "must be a street address, not a PO box" });
    }
    // Write-only values may be omitted on update: the stored ones still count.
    const front = p.frontAttachmentId ?? previous?.frontAttachmentId;
    if (!p.usResident) {
      if (!p.internationalIdType) {
        issues.push({ path: at("internationalIdType"), message: "required when usResident is false" });
      }
      if (!p.internationalId && !previous?.internationalId) {
        issues.push({ path: at("internationalId"), message: "required when usResident is false" });
      }
      if (!front)
        issues.push({ path: at("frontAttachmentId"), message: "required when usResident is false" });
    }
    if (ctx.businessType === SOLE_PROPRIETORSHIP && !front && p.usResident) {
      issues.push({
        path: at("frontAttachmentId"),
        message: "required for every owner of a sole proprietorship",
      });
    }
    for (const field of ["frontAttachmentId", "backAttachmentId"] as const) {
      const id = p[field];
      if (id !== undefined && !ctx.attachmentExists(id)) {
        issues.push({ path: at(field), message: `attachment ${id} not found for this entity` });
      }
    }
  });
  if (fxHolders !== 1) {
    issues.push({
      path: "data",
      message: `exactly one person must have type fx-account-holder (found ${fxHolders})`,
    });
  }
  // Percentages are decimals; compare with a small tolerance so 0.6 + 0.4 is not "over 1".
  if (uboTotal > 1 + 1e-9) {
    issues.push({ path: "data", message: `ownershipPercentage of ubo owners totals ${uboTotal}, above 1` });
  }
  return issues;
}

function last4(value: string): string {
  return value.slice(-4);
}

/** Builds the stored record of a person: response form plus write-only values. */
export function toStoredOwner(
  input: BeneficialOwnerInput,
  previous: StoredOwner | undefined,
  id: number,
  iso: string,
): StoredOwner {
  // A client that read the set back may send the last four characters it was shown: keep the full value.
  const internationalId =
    input.internationalId !== undefined && input.internationalId !== previous?.owner.internationalId
      ? input.internationalId
      : previous?.internationalId;
  const taxIdentifier = input.taxInfo?.identifier ?? previous?.taxIdentifier;
  const taxType = input.taxInfo?.type ?? previous?.owner.taxInfo?.type;
  const frontAttachmentId = input.frontAttachmentId ?? previous?.frontAttachmentId;
  const backAttachmentId = input.backAttachmentId ?? previous?.backAttachmentId;
  const owner: BeneficialOwner = {
    id,
    firstName: input.firstName,
    lastName: input.lastName,
    dateOfBirth: input.dateOfBirth,
    address: input.address,
    usResident: input.usResident,
    types: input.types,
    ...(input.ownershipPercentage !== undefined ? { ownershipPercentage: input.ownershipPercentage } : {}),
    ...(input.jobTitle ? { jobTitle: input.jobTitle } : {}),
    ...(taxIdentifier && taxType
      ? { taxInfo: { type: taxType, identifierLast4: last4(taxIdentifier) } }
      : {}),
    ...(!taxIdentifier && previous?.owner.taxInfo ? { taxInfo: previous.owner.taxInfo } : {}),
    ...(input.internationalIdType ? { internationalIdType: input.internationalIdType } : {}),
    ...(internationalId ? { internationalId: last4(internationalId) } : {}),
    hasIdentityDocument: Boolean(frontAttachmentId) || (previous?.owner.hasIdentityDocument ?? false),
    ...(input.email ? { email: input.email } : {}),
    ...(input.phoneNumber ? { phoneNumber: input.phoneNumber } : {}),
    createdAt: previous?.owner.createdAt ?? iso,
    updatedAt: iso,
  };
  return {
    owner,
    ...(taxIdentifier ? { taxIdentifier } : {}),
    ...(internationalId ? { internationalId } : {}),
    ...(frontAttachmentId ? { frontAttachmentId } : {}),
    ...(backAttachmentId ? { backAttachmentId } : {}),
  };
}

export const MISSING_FX_ACCOUNT_HOLDER = {
  code: "MissingInformation",
  message: "A beneficial owner with type fx-account-holder must be recorded before paying internationally.",
  missingFields: ["beneficialOwners.fx-account-holder"],
} as const;

/**
 * Capabilities of an entity: all four known operations, allowed unless a seed restriction applies;
 * `payment.international:write` additionally needs exactly one recorded fx-account-holder.
 */
export function computeLimitations(
  owners: readonly StoredOwner[],
  restrictions: readonly SeedRestriction[],
): Limitations {
  const hasFxHolder = owners.some((o) => o.owner.types.includes("fx-account-holder"));
  const capabilities: Capability[] = KNOWN_OPERATIONS.map((operation) => {
    const reasons: Capability["reasons"] = restrictions
      .filter((r) => r.operation === operation)
      .map(({ operation: _op, ...reason }) => reason);
    if (operation === "payment.international:write" && !hasFxHolder) {
      reasons.push({
        ...MISSING_FX_ACCOUNT_HOLDER,
        missingFields: [...MISSING_FX_ACCOUNT_HOLDER.missingFields],
      });
    }
    return { operation, allowed: reasons.length === 0, reasons };
  });
  return { capabilities };
}
