/**
 * Keys seen so far in a sheet (references, what a row pays), each with the first row that used it, an
 * optional short note about that row (its reference) and how many rows used it: what the duplicate
 * checks need, kept exact and compact. A `Map<string, number>` costs about 90 bytes per
 * reference (the entry and a string object), 90 MB for a 1,000,000-row sheet; here the references'
 * UTF-8 bytes (then the note's) go one after another into one buffer and the rest lives in typed
 * arrays (about 45 bytes per key), so `payouts validate` and `payouts submit` of a 1M-row sheet stay within their
 * memory budget. Pure: no I/O.
 */

const EMPTY = 0;

/** What {@link FirstUseIndex.record} knows of a key: its first row, that row's note, how often seen. */
export interface FirstUse {
  firstRow: number;
  firstNote: string | undefined;
  /** 1 for the first row with the key, 2 for the second, ... */
  occurrence: number;
}

export class FirstUseIndex {
  /** The references' UTF-8 bytes, back to back; entry i spans [starts[i], starts[i + 1]). */
  private bytes = Buffer.alloc(1 << 16);
  private used = 0;
  private starts = new Float64Array(1024);
  private firstRows = new Uint32Array(1024);
  private keyLengths = new Uint32Array(1024);
  private counts = new Uint32Array(1024);
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
    const use = this.record(reference, rowNumber);
    return use.occurrence === 1 ? undefined : use.firstRow;
  }

  /**
   * Records one more use of `key` by `rowNumber` and answers its first use; `note` is kept only with
   * the first use (the first row's reference, say).
   */
  record(key: string, rowNumber: number, note?: string): FirstUse {
    const keyLength = Buffer.byteLength(key, "utf8");
    const noteLength = note === undefined ? 0 : Buffer.byteLength(note, "utf8");
    if (this.scratch.length < keyLength + noteLength)
      this.scratch = Buffer.alloc((keyLength + noteLength) * 2);
    this.scratch.write(key, 0, "utf8");
    const hash = fnv1a(this.scratch, keyLength);
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (;;) {
      const entry = this.slots[slot]!;
      if (entry === EMPTY) break;
      const i = entry - 1;
      if (this.hashes[i] === hash && this.sameKey(i, keyLength)) {
        this.counts[i] = this.counts[i]! + 1;
        return { firstRow: this.firstRows[i]!, firstNote: this.noteOf(i), occurrence: this.counts[i]! };
      }
      slot = (slot + 1) & mask;
    }
    if (note !== undefined) this.scratch.write(note, keyLength, "utf8");
    this.append(keyLength, noteLength, hash, rowNumber);
    this.slots[slot] = this.count;
    if (this.count * 2 > this.slots.length) this.rehash();
    return { firstRow: rowNumber, firstNote: note, occurrence: 1 };
  }

  private endOf(entry: number): number {
    return entry + 1 < this.count ? this.starts[entry + 1]! : this.used;
  }

  private sameKey(entry: number, length: number): boolean {
    const start = this.starts[entry]!;
    return (
      this.keyLengths[entry] === length &&
      this.bytes.compare(this.scratch, 0, length, start, start + length) === 0
    );
  }

  private noteOf(entry: number): string | undefined {
    const from = this.starts[entry]! + this.keyLengths[entry]!;
    const end = this.endOf(entry);
    return end > from ? this.bytes.toString("utf8", from, end) : undefined;
  }

  private append(keyLength: number, noteLength: number, hash: number, rowNumber: number): void {
    const length = keyLength + noteLength;
    if (this.used + length > this.bytes.length) {
      const grown = Buffer.alloc(Math.max(this.bytes.length * 2, this.used + length));
      this.bytes.copy(grown, 0, 0, this.used);
      this.bytes = grown;
    }
    if (this.count === this.starts.length) {
      this.starts = grow(this.starts, new Float64Array(this.count * 2));
      this.firstRows = grow(this.firstRows, new Uint32Array(this.count * 2));
      this.hashes = grow(this.hashes, new Uint32Array(this.count * 2));
      this.keyLengths = grow(this.keyLengths, new Uint32Array(this.count * 2));
      this.counts = grow(this.counts, new Uint32Array(this.count * 2));
    }
    this.scratch.copy(this.bytes, this.used, 0, length);
    this.starts[this.count] = this.used;
    this.firstRows[this.count] = rowNumber;
    this.hashes[this.count] = hash;
    this.keyLengths[this.count] = keyLength;
    this.counts[this.count] = 1;
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
