/**
 * The sandbox seed: the partner, its entities, their accounts and beneficial owners. The seed holds
 * account and owner data in response form (last four characters only), so no full bank, card or tax
 * identifier is ever written to a file.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import {
  Account,
  BeneficialOwner,
  ExternalId,
  KNOWN_OPERATIONS,
  LimitationReason,
  Metadata,
} from "./wire.js";

/** A limitation the seed imposes on top of what the sandbox derives (e.g. a risk restriction). */
export const SeedRestriction = LimitationReason.extend({ operation: z.enum(KNOWN_OPERATIONS) });
export type SeedRestriction = z.infer<typeof SeedRestriction>;

export const SeedAccount = Account.omit({ createdAt: true, updatedAt: true }).extend({
  /**
   * Sandbox-only: a higher-risk destination never paid before. A payment to it needs an `attachmentId`
   * until it has a payment that is scheduled, in progress or completed.
   */
  requiresAttachmentUntilPaid: z.boolean().optional(),
});
export type SeedAccount = z.infer<typeof SeedAccount>;

export const SeedBeneficialOwner = BeneficialOwner.omit({ createdAt: true, updatedAt: true });
export type SeedBeneficialOwner = z.infer<typeof SeedBeneficialOwner>;

export const SeedEntity = z.object({
  id: z.string().startsWith("ent_"),
  name: z.string().min(1),
  businessType: z.string().min(1),
  externalId: ExternalId.optional(),
  metadata: Metadata.optional(),
  beneficialOwners: z.array(SeedBeneficialOwner).default([]),
  accounts: z.array(SeedAccount).default([]),
  restrictions: z.array(SeedRestriction).default([]),
});
export type SeedEntity = z.infer<typeof SeedEntity>;

export const SandboxSeed = z.object({
  description: z.string().optional(),
  partner: z.object({
    name: z.string().min(1),
    /** Sandbox-only key; not a secret. */
    apiKey: z.string().min(8),
    revokedApiKeys: z.array(z.string()).default([]),
    /** Webhook signing secret; defaults to the API key, as the spec says. */
    webhookSecret: z.string().min(1).optional(),
  }),
  entities: z.array(SeedEntity).min(1),
});
export type SandboxSeed = z.infer<typeof SandboxSeed>;

/** Parse a seed object, naming the failing path. */
export function parseSeed(value: unknown, source = "seed"): SandboxSeed {
  const result = SandboxSeed.safeParse(value);
  if (!result.success) {
    const where = result.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new Error(`invalid sandbox seed ${source}: ${where}`);
  }
  return result.data;
}

export async function loadSeed(path: string): Promise<SandboxSeed> {
  const text = await readFile(path, "utf8");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`sandbox seed ${path} is not valid JSON: ${(err as Error).message}`);
  }
  return parseSeed(json, path);
}

/**
 * A seed under the repository's `samples/` (beside the sample sheets that pay its accounts), found by
 * walking up from this module, so it works from `src/` under the tests and from the built `dist/`.
 */
export function samplePath(fileName: string): string {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    const candidate = join(dir, "samples", fileName);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) throw new Error(`samples/${fileName} not found above ${start}`);
  }
}

export const DEFAULT_SEED_FILE = "sandbox-seed.json";
export const RESTRICTED_SEED_FILE = "sandbox-seed-restricted.json";

/** The default seed, `samples/sandbox-seed.json`: one fully onboarded entity, `acme-corp`. */
export function loadDefaultSeed(): Promise<SandboxSeed> {
  return loadSeed(samplePath(DEFAULT_SEED_FILE));
}

/** `samples/sandbox-seed-restricted.json`: an entity with outstanding limitations (no fx-account-holder). */
export function loadRestrictedSeed(): Promise<SandboxSeed> {
  return loadSeed(samplePath(RESTRICTED_SEED_FILE));
}
