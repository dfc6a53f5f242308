/**
 * The sandbox's in-memory store. Records keep the response form of each resource plus what the
 * service must know but never return (full identifiers, write-only document ids, trigger outcomes).
 */
import { randomBytes } from "node:crypto";
import type { StoredQuote } from "./fx.js";
import { IdempotencyStore } from "./idempotency.js";
import { newId } from "./ids.js";
import type { Listable } from "./pagination.js";
import { PaymentStore } from "./payment-store.js";
import type { SandboxSeed, SeedRestriction } from "./seed.js";
import type {
  Account,
  Attachment,
  BeneficialOwner,
  Entity,
  EventType,
  WebhookDelivery,
  WebhookEndpoint,
} from "./wire.js";

export interface StoredEntity extends Listable {
  entity: Entity;
  restrictions: SeedRestriction[];
}

/** Full identifiers given at creation; kept in memory only and never serialized. */
export interface AccountSecrets {
  accountNumber?: string;
  iban?: string;
  cardNumber?: string;
}

export interface StoredAccount extends Listable {
  account: Account;
  entityId: string;
  requiresAttachmentUntilPaid: boolean;
  secrets: AccountSecrets;
}

import { StoredPayment } from "./payment-record.js";

export { StoredPayment };

export interface StoredAttachment {
  attachment: Attachment;
  entityId: string;
}

export interface StoredOwner {
  owner: BeneficialOwner;
  /** Write-only values: full identifiers and identity document ids. */
  taxIdentifier?: string;
  internationalId?: string;
  frontAttachmentId?: string;
  backAttachmentId?: string;
}

export interface EmittedEvent {
  delivery: WebhookDelivery;
}

export interface PartnerConfig {
  name: string;
  apiKey: string;
  revokedApiKeys: string[];
  webhookSecret: string;
}

export type EventListener = (event: EmittedEvent) => void;

const EVENT_LOG_MAX = 1000;

export class SandboxState {
  readonly partner: PartnerConfig;
  readonly entities = new Map<string, StoredEntity>();
  readonly accounts = new Map<string, StoredAccount>();
  /** Payments with the indexes their lookups and lists need (see payment-store.ts). */
  readonly payments = new PaymentStore();
  readonly attachments = new Map<string, StoredAttachment>();
  readonly owners = new Map<string, StoredOwner[]>();
  readonly quotes = new Map<string, StoredQuote>();
  readonly idempotency: IdempotencyStore;
  /** The last events emitted (whether or not a webhook was configured), oldest first. */
  readonly events: EmittedEvent[] = [];
  webhook: WebhookEndpoint | undefined;
  /** Per-run secret that signs sandbox sonar tokens. */
  readonly sonarSecret = randomBytes(32);
  private seq = 0;
  private nextOwnerId = 1;
  private readonly listeners = new Set<EventListener>();

  constructor(
    seed: SandboxSeed,
    readonly now: () => number = Date.now,
    idempotencyTtlMs?: number,
  ) {
    this.partner = {
      name: seed.partner.name,
      apiKey: seed.partner.apiKey,
      revokedApiKeys: seed.partner.revokedApiKeys,
      webhookSecret: seed.partner.webhookSecret ?? seed.partner.apiKey,
    };
    // A created payment's record keeps its slot, not a reference to an object per payment.
    this.idempotency = new IdempotencyStore(now, idempotencyTtlMs, {
      toRef: (body) => (body instanceof StoredPayment ? body.slot : undefined),
      fromRef: (slot) => this.payments.at(slot),
    });
    this.load(seed);
  }

  private load(seed: SandboxSeed): void {
    const at = this.now();
    const iso = new Date(at).toISOString();
    for (const e of seed.entities) {
      this.entities.set(e.id, {
        id: e.id,
        seq: this.nextSeq(),
        createdMs: at,
        externalId: e.externalId,
        metadata: e.metadata,
        restrictions: e.restrictions,
        entity: {
          id: e.id,
          name: e.name,
          businessType: e.businessType,
          ...(e.externalId ? { externalId: e.externalId } : {}),
          ...(e.metadata ? { metadata: e.metadata } : {}),
          createdAt: iso,
          updatedAt: iso,
        },
      });
      this.owners.set(
        e.id,
        e.beneficialOwners.map((o) => ({ owner: { ...o, createdAt: iso, updatedAt: iso } })),
      );
      for (const o of e.beneficialOwners) this.nextOwnerId = Math.max(this.nextOwnerId, o.id + 1);
      for (const a of e.accounts) {
        const { requiresAttachmentUntilPaid, ...account } = a;
        this.accounts.set(a.id, {
          id: a.id,
          seq: this.nextSeq(),
          createdMs: at,
          externalId: a.externalId,
          metadata: a.metadata,
          entityId: e.id,
          requiresAttachmentUntilPaid: requiresAttachmentUntilPaid === true,
          secrets: {},
          account: { ...account, createdAt: iso, updatedAt: iso },
        });
      }
    }
  }

  nextSeq(): number {
    return ++this.seq;
  }

  allocateOwnerId(): number {
    return this.nextOwnerId++;
  }

  isoNow(): string {
    return new Date(this.now()).toISOString();
  }

  onEvent(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Records an event and hands it to the listeners (the webhook deliverer). */
  emit(
    event: EventType,
    resource: {
      id: string;
      entityId: string;
      externalId?: string | undefined;
      metadata?: Record<string, string> | undefined;
      data?: Record<string, unknown>;
    },
  ): EmittedEvent {
    const entity = this.entities.get(resource.entityId);
    const withEntityExternalId = event.startsWith("api.account.") || event.startsWith("api.payment.");
    const delivery: WebhookDelivery = {
      event,
      messageId: newId("msg"),
      id: resource.id,
      entityId: resource.entityId,
      occurredAt: this.isoNow(),
      ...(resource.externalId ? { externalId: resource.externalId } : {}),
      ...(withEntityExternalId && entity?.externalId ? { entityExternalId: entity.externalId } : {}),
      ...(resource.metadata && Object.keys(resource.metadata).length > 0
        ? { metadata: resource.metadata }
        : {}),
      ...(resource.data ? { data: resource.data } : {}),
    };
    const emitted = { delivery };
    this.events.push(emitted);
    if (this.events.length > EVENT_LOG_MAX) this.events.shift();
    for (const l of this.listeners) l(emitted);
    return emitted;
  }

  accountsOf(entityId: string): StoredAccount[] {
    return [...this.accounts.values()].filter((a) => a.entityId === entityId);
  }

  /**
   * externalIds are unique per partner per resource type (across the partner's entities). A scan:
   * for entities and accounts, which a partner has few of; payments have their own index.
   */
  findByExternalId<T extends Listable>(map: ReadonlyMap<string, T>, externalId: string): T | undefined {
    for (const item of map.values()) if (item.externalId === externalId) return item;
    return undefined;
  }
}
