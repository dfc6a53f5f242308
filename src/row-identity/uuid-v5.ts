/**
 * RFC 9562 UUID version 5 (SHA-1, name-based) on node:crypto, so a row's Idempotency-Key is a pure
 * function of its identity and needs no extra dependency.
 */
import { hash } from "node:crypto";

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Namespaces as bytes: a few fixed ones are used for every key of every row. */
const namespaceBytes = new Map<string, Buffer>();

function uuidBytes(uuid: string): Buffer {
  let bytes = namespaceBytes.get(uuid);
  if (bytes) return bytes;
  if (!UUID_PATTERN.test(uuid)) throw new TypeError(`not a UUID: ${uuid}`);
  bytes = Buffer.from(uuid.replace(/-/g, ""), "hex");
  if (namespaceBytes.size < 16) namespaceBytes.set(uuid, bytes);
  return bytes;
}

/** A hex byte with some bits replaced: `(byte & keep) | set`. */
function withBits(hexByte: string, keep: number, set: number): string {
  return ((Number.parseInt(hexByte, 16) & keep) | set).toString(16).padStart(2, "0");
}

/** The version 5 UUID of `name` (UTF-8) in `namespace`. Same inputs, same UUID, on every machine. */
export function uuidV5(name: string, namespace: string): string {
  // The one-shot hash of namespace and name, as hex: a key is computed per row on every send and
  // every result file line, and a Hash object per call costs more than the digest itself.
  const hex = hash("sha1", Buffer.concat([uuidBytes(namespace), Buffer.from(name, "utf8")]), "hex");
  const version = withBits(hex.slice(12, 14), 0x0f, 0x50); // version 5
  const variant = withBits(hex.slice(16, 18), 0x3f, 0x80); // RFC 4122/9562 variant
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${version}${hex.slice(14, 16)}-${variant}${hex.slice(18, 20)}-${hex.slice(20, 32)}`;
}
