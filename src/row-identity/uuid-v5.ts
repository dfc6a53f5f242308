/**
 * RFC 9562 UUID version 5 (SHA-1, name-based) on node:crypto, so a row's Idempotency-Key is a pure
 * function of its identity and needs no extra dependency.
 */
import { createHash } from "node:crypto";

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function uuidBytes(uuid: string): Buffer {
  if (!UUID_PATTERN.test(uuid)) throw new TypeError(`not a UUID: ${uuid}`);
  return Buffer.from(uuid.replace(/-/g, ""), "hex");
}

/** The version 5 UUID of `name` (UTF-8) in `namespace`. Same inputs, same UUID, on every machine. */
export function uuidV5(name: string, namespace: string): string {
  const hash = createHash("sha1").update(uuidBytes(namespace)).update(name, "utf8").digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50; // version 5
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC 4122/9562 variant
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
