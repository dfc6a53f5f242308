/** Entities (minimal create/update/delete), beneficial owners, limitations and attachments. */
import { z } from "zod";
import { conflict, notFound, parseOrThrow, validationError } from "./errors.js";
import { canonicalJson } from "./idempotency.js";
import { newId } from "./ids.js";
import { computeLimitations, toStoredOwner, validateOwnerSet } from "./owners.js";
import { type ListQuery, matchesCommonFilters, paginate } from "./pagination.js";
import type { SandboxState, StoredEntity } from "./state.js";
import {
  ATTACHMENT_MAX_BYTES,
  type Attachment,
  AttachmentCreate,
  type BeneficialOwner,
  BeneficialOwnerReplace,
  type Entity,
  ExternalId,
  type Limitations,
  Metadata,
} from "./wire.js";

/** The spec shows no entity payload; the sandbox accepts this minimal one. */
export const EntityCreate = z.object({
  name: z.string().min(1).max(255),
  businessType: z.string().min(1).max(64),
  externalId: ExternalId.optional(),
  metadata: Metadata.optional(),
});
export const EntityUpdate = EntityCreate.partial().strict();

export function listEntities(state: SandboxState, q: ListQuery): { data: Entity[]; hasMore: boolean } {
  const page = paginate(
    [...state.entities.values()].filter((e) => matchesCommonFilters(e, q)),
    q,
    state.entities,
  );
  return { data: page.data.map((e) => e.entity), hasMore: page.hasMore };
}

export function entityOf(state: SandboxState, id: string): StoredEntity {
  const e = state.entities.get(id);
  if (!e) throw notFound(`entity ${id} not found`);
  return e;
}

function assertEntityExternalIdFree(
  state: SandboxState,
  externalId: string | undefined,
  self?: string,
): void {
  if (externalId === undefined) return;
  const existing = state.findByExternalId(state.entities, externalId);
  if (existing && existing.id !== self) {
    throw conflict(
      "DUPLICATE_EXTERNAL_ID",
      `externalId ${externalId} is already used by entity ${existing.id}`,
      {
        existingId: existing.id,
      },
    );
  }
}

export function createEntity(state: SandboxState, rawBody: unknown): Entity {
  const input = parseOrThrow(EntityCreate, rawBody);
  assertEntityExternalIdFree(state, input.externalId);
  const nowMs = state.now();
  const iso = new Date(nowMs).toISOString();
  const id = newId("ent");
  const entity: Entity = { id, ...input, createdAt: iso, updatedAt: iso };
  state.entities.set(id, {
    id,
    seq: state.nextSeq(),
    createdMs: nowMs,
    externalId: input.externalId,
    metadata: input.metadata,
    restrictions: [],
    entity,
  });
  state.owners.set(id, []);
  state.emit("api.entity.created", {
    id,
    entityId: id,
    externalId: input.externalId,
    metadata: input.metadata,
  });
  return entity;
}

export function updateEntity(state: SandboxState, id: string, rawBody: unknown): Entity {
  const stored = entityOf(state, id);
  const input = parseOrThrow(EntityUpdate, rawBody);
  assertEntityExternalIdFree(state, input.externalId, id);
  Object.assign(stored.entity, input, { updatedAt: state.isoNow() });
  stored.externalId = stored.entity.externalId;
  stored.metadata = stored.entity.metadata;
  state.emit("api.entity.updated", {
    id,
    entityId: id,
    externalId: stored.entity.externalId,
    metadata: stored.entity.metadata,
  });
  return stored.entity;
}

/** Deleting an entity that still holds accounts would orphan them: refused with 409. */
export function deleteEntity(state: SandboxState, id: string): { id: string; deleted: true } {
  entityOf(state, id);
  if (state.accountsOf(id).length > 0) {
    throw conflict("ACCOUNT_IN_USE", `entity ${id} still has accounts; delete them first`);
  }
  state.entities.delete(id);
  state.owners.delete(id);
  return { id, deleted: true };
}

export function limitationsOf(state: SandboxState, entityId: string): Limitations {
  return computeLimitations(state.owners.get(entityId) ?? [], entityOf(state, entityId).restrictions);
}

export function listOwners(state: SandboxState, entityId: string): { data: BeneficialOwner[] } {
  entityOf(state, entityId);
  return { data: (state.owners.get(entityId) ?? []).map((o) => o.owner) };
}

/** PUT replace semantics: entries with an id update, without create; anyone missing is deleted. */
export function replaceOwners(
  state: SandboxState,
  entityId: string,
  rawBody: unknown,
): { data: BeneficialOwner[] } {
  const entity = entityOf(state, entityId);
  const body = parseOrThrow(BeneficialOwnerReplace, rawBody);
  const existing = state.owners.get(entityId) ?? [];
  const issues = validateOwnerSet(body.data, {
    businessType: entity.entity.businessType,
    existing,
    attachmentExists: (id) => state.attachments.get(id)?.entityId === entityId,
  });
  if (issues.length) {
    throw validationError(
      `Invalid beneficial owners: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`,
      issues,
    );
  }
  const before = canonicalJson(limitationsOf(state, entityId));
  const iso = state.isoNow();
  const byId = new Map(existing.map((o) => [o.owner.id, o]));
  const next = body.data.map((p) => {
    const previous = p.id !== undefined ? byId.get(p.id) : undefined;
    return toStoredOwner(p, previous, p.id ?? state.allocateOwnerId(), iso);
  });
  state.owners.set(entityId, next);
  if (canonicalJson(limitationsOf(state, entityId)) !== before) {
    state.emit("api.limitation.updated", {
      id: entityId,
      entityId,
      externalId: entity.externalId,
      metadata: entity.metadata,
    });
  }
  return { data: next.map((o) => o.owner) };
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function createAttachment(state: SandboxState, entityId: string, rawBody: unknown): Attachment {
  const body = parseOrThrow(AttachmentCreate, rawBody);
  const compact = body.contentBase64.replace(/\s+/g, "");
  if (compact.length % 4 === 1 || !BASE64.test(compact)) {
    throw validationError("contentBase64 is not valid base64", [
      { path: "contentBase64", message: "invalid base64" },
    ]);
  }
  const bytes = Buffer.from(compact, "base64");
  if (bytes.length === 0 || bytes.length > ATTACHMENT_MAX_BYTES) {
    throw validationError(
      `attachment must be 1 byte to ${ATTACHMENT_MAX_BYTES} bytes (got ${bytes.length})`,
      [{ path: "contentBase64", message: "size out of range" }],
    );
  }
  const id = newId("att");
  const attachment: Attachment = {
    id,
    fileName: body.fileName,
    contentType: body.contentType,
    size: bytes.length,
    createdAt: state.isoNow(),
  };
  // Only the size is kept: the sandbox never needs the document itself.
  state.attachments.set(id, { attachment, entityId });
  return attachment;
}
