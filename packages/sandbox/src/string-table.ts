/**
 * Growable typed-array building blocks of the columnar payment store (pure, no I/O).
 *
 * A JS string costs a 16-byte header plus its characters, rounded up to 8, and a Map entry about
 * 30 to 60 more; a million externalIds held that way cost ~80 MB. A `StringTable` keeps each
 * distinct string once, as bytes in one growing buffer, found through an open-addressing hash of
 * integers: about its length plus 12 bytes, and a repeated string (a batch id on every row) only
 * its integer id per use.
 */

/** A copy of `from` in a new array of `capacity` elements, the rest filled with `fill`. */
export function grown<T extends Int32Array | Uint32Array | Uint8Array | Uint16Array | Float64Array>(
  from: T,
  capacity: number,
  fill = 0,
): T {
  const to = new (from.constructor as new (n: number) => T)(capacity);
  to.set(from);
  if (fill !== 0) to.fill(fill, from.length);
  return to;
}

/** FNV-1a over UTF-16 code units, finished with a multiply-xorshift so low bits spread. */
function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  return Math.imul(h, 0x7feb352d) >>> 0;
}

/** The same hash over bytes [start, end) of `bytes` (a one-byte string's code units). */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ (bytes[i] as number), 0x01000193);
  h ^= h >>> 16;
  return Math.imul(h, 0x7feb352d) >>> 0;
}

/** Whether every code unit of `s` fits in one byte (Latin-1), so the bytes round-trip exactly. */
function isOneByte(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) return false;
  return true;
}

/**
 * Distinct strings by dense integer id (0, 1, 2, … in first-seen order); never forgets one, which
 * suits a store that never deletes (a PATCH leaves its old value behind: rare, bounded by requests).
 * One-byte strings live in `bytes`; the rare string with a wider character is kept as itself in
 * `wide` (its byte range stays empty).
 */
export class StringTable {
  private bytes = new Uint8Array(1 << 16);
  private bytesView = Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
  private used = 0;
  /** Byte range of id i: [starts[i], starts[i + 1]). */
  private starts = new Uint32Array(1 << 10);
  private count = 0;
  private readonly wide = new Map<number, string>();
  /** Open addressing, linear probing: id + 1, 0 for empty; at most half full. */
  private slots = new Int32Array(1 << 11);

  get size(): number {
    return this.count;
  }

  /** The id of `s`, or -1 when it was never added. */
  find(s: string): number {
    const mask = this.slots.length - 1;
    for (let i = hashString(s) & mask; ; i = (i + 1) & mask) {
      const entry = this.slots[i] as number;
      if (entry === 0) return -1;
      if (this.equals(entry - 1, s)) return entry - 1;
    }
  }

  /** The id of `s`, adding it when new. */
  intern(s: string): number {
    const mask = this.slots.length - 1;
    let i = hashString(s) & mask;
    for (; ; i = (i + 1) & mask) {
      const entry = this.slots[i] as number;
      if (entry === 0) break;
      if (this.equals(entry - 1, s)) return entry - 1;
    }
    const id = this.append(s);
    this.slots[i] = id + 1;
    if (this.count * 2 > this.slots.length) this.rehash();
    return id;
  }

  get(id: number): string {
    const start = this.starts[id] as number;
    const end = this.starts[id + 1] as number;
    if (start === end) return this.wide.get(id) ?? "";
    return this.bytesView.toString("latin1", start, end);
  }

  private equals(id: number, s: string): boolean {
    const start = this.starts[id] as number;
    const end = this.starts[id + 1] as number;
    if (start === end) return (this.wide.get(id) ?? "") === s;
    if (end - start !== s.length) return false;
    const bytes = this.bytes;
    for (let i = 0; i < s.length; i++) if (bytes[start + i] !== s.charCodeAt(i)) return false;
    return true;
  }

  private append(s: string): number {
    const id = this.count++;
    if (this.count + 1 > this.starts.length) this.starts = grown(this.starts, this.starts.length * 2);
    if (s.length > 0 && isOneByte(s)) {
      if (this.used + s.length > this.bytes.length) {
        let capacity = this.bytes.length * 2;
        while (this.used + s.length > capacity) capacity *= 2;
        this.bytes = grown(this.bytes, capacity);
        this.bytesView = Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
      }
      this.used += this.bytesView.write(s, this.used, "latin1");
    } else if (s.length > 0) {
      this.wide.set(id, s);
    }
    this.starts[id + 1] = this.used;
    return id;
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let id = 0; id < this.count; id++) {
      const start = this.starts[id] as number;
      const end = this.starts[id + 1] as number;
      const h = start === end ? hashString(this.wide.get(id) ?? "") : hashBytes(this.bytes, start, end);
      let i = h & mask;
      while (slots[i] !== 0) i = (i + 1) & mask;
      slots[i] = id + 1;
    }
    this.slots = slots;
  }
}

/** A few distinct values (accounts, entities, currencies) by small integer id, both ways. */
export class SmallTable<T extends string> {
  private readonly ids = new Map<T, number>();
  private readonly values: T[] = [];

  intern(value: T): number {
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.values.length;
      this.values.push(value);
      this.ids.set(value, id);
    }
    return id;
  }

  /** The id of `value`, or -1 when it never was interned. */
  find(value: T): number {
    return this.ids.get(value) ?? -1;
  }

  get(id: number): T {
    return this.values[id] as T;
  }
}

/** A growable list of payment slots (4 bytes each instead of 8 for a pointer in a JS array). */
export class SlotList {
  private items: Int32Array;
  length = 0;

  constructor(capacity = 4) {
    this.items = new Int32Array(capacity);
  }

  static of(slot: number): SlotList {
    const list = new SlotList(1);
    list.push(slot);
    return list;
  }

  at(i: number): number {
    return this.items[i] as number;
  }

  push(slot: number): void {
    // At least 4: a list retained down to nothing (or made empty) must still grow.
    if (this.length === this.items.length) this.items = grown(this.items, Math.max(4, this.items.length * 2));
    this.items[this.length++] = slot;
  }

  insertAt(i: number, slot: number): void {
    this.push(slot);
    this.items.copyWithin(i + 1, i, this.length - 1);
    this.items[i] = slot;
  }

  removeAt(i: number): void {
    this.items.copyWithin(i, i + 1, this.length);
    this.length--;
  }

  /** Keeps only the slots `keep` accepts, in order, and gives back the spare capacity. */
  retain(keep: (slot: number) => boolean): void {
    let n = 0;
    for (let i = 0; i < this.length; i++) {
      const slot = this.items[i] as number;
      if (keep(slot)) this.items[n++] = slot;
    }
    this.length = n;
    if (this.items.length > 16 && n * 4 < this.items.length)
      this.items = this.items.slice(0, Math.max(4, n * 2));
  }
}
