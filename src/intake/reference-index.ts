/**
 * The references seen so far in a sheet, each with the first row that used it: what the duplicate
 * reference check needs, kept exact and compact. A `Map<string, number>` costs about 90 bytes per
 * reference (the entry and a string object), 90 MB for a 1,000,000-row sheet; here the references'
 * UTF-8 bytes go one after another into one buffer and the rest lives in typed arrays (about 35 bytes
 * per reference), so `payouts validate` and `payouts submit` of a 1M-row sheet stay within their
 * memory budget. Pure: no I/O.
 */

const EMPTY = 0;

export class ReferenceIndex {
  /** The references' UTF-8 bytes, back to back; entry i spans [starts[i], starts[i + 1]). */
  private bytes = Buffer.alloc(1 << 16);
  private used = 0;
  private starts = new Float64Array(1024);
  private firstRows = new Uint32Array(1024);
  private hashes = new Uint32Array(1024);
  private count = 0;
  /** Open addressing: slot → entry index + 1 (0 is empty); at most half full. */
  private slots = new Uint32Array(2048);
  private scratch = Buffer.alloc(256);

  get size(): number {
    return this.count;
  }

  /**
   * The first row that used `reference`, or undefined after recording `rowNumber` as its first use.
   */
  firstUseOrRecord(reference: string, rowNumber: number): number | undefined {
    const length = Buffer.byteLength(reference, "utf8");
    if (this.scratch.length < length) this.scratch = Buffer.alloc(length * 2);
    this.scratch.write(reference, 0, "utf8");
    const hash = fnv1a(this.scratch, length);
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (;;) {
      const entry = this.slots[slot]!;
      if (entry === EMPTY) break;
      const i = entry - 1;
      if (this.hashes[i] === hash && this.sameBytes(i, length)) return this.firstRows[i];
      slot = (slot + 1) & mask;
    }
    this.append(length, hash, rowNumber);
    this.slots[slot] = this.count;
    if (this.count * 2 > this.slots.length) this.rehash();
    return undefined;
  }

  private sameBytes(entry: number, length: number): boolean {
    const start = this.starts[entry]!;
    const end = entry + 1 < this.count ? this.starts[entry + 1]! : this.used;
    return end - start === length && this.bytes.compare(this.scratch, 0, length, start, end) === 0;
  }

  private append(length: number, hash: number, rowNumber: number): void {
    if (this.used + length > this.bytes.length) {
      const grown = Buffer.alloc(Math.max(this.bytes.length * 2, this.used + length));
      this.bytes.copy(grown, 0, 0, this.used);
      this.bytes = grown;
    }
    if (this.count === this.starts.length) {
      this.starts = grow(this.starts, new Float64Array(this.count * 2));
      this.firstRows = grow(this.firstRows, new Uint32Array(this.count * 2));
      this.hashes = grow(this.hashes, new Uint32Array(this.count * 2));
    }
    this.scratch.copy(this.bytes, this.used, 0, length);
    this.starts[this.count] = this.used;
    this.firstRows[this.count] = rowNumber;
    this.hashes[this.count] = hash;
    this.used += length;
    this.count++;
  }

  private rehash(): void {
    const slots = new Uint32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let i = 0; i < this.count; i++) {
      let slot = this.hashes[i]! & mask;
      while (slots[slot] !== EMPTY) slot = (slot + 1) & mask;
      slots[slot] = i + 1;
    }
    this.slots = slots;
  }
}

function grow<T extends Float64Array | Uint32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

/** FNV-1a (32 bits) of the first `length` bytes. */
function fnv1a(bytes: Buffer, length: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < length; i++) {
    hash ^= bytes[i]!;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
