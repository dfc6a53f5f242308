/**
 * Keys seen so far in a sheet (references, what a row pays), each with the first row that used it, an
 * optional short note about that row (its reference) and how many rows used it: what the duplicate
 * checks need, kept exact and compact. A `Map<string, number>` costs about 90 bytes per
 * reference (the entry and a string object), 90 MB for a 1,000,000-row sheet; here the references'
 * UTF-8 bytes (then the note's) go one after another into pages of bytes and the rest lives in typed
 * arrays (25 bytes per key, and the open-addressing slots), so `payouts validate` and `payouts submit`
 * of a 1M-row sheet stay within their memory budget. The pages are filled and never copied, and the
 * arrays grow by half: a buffer doubled and copied as it fills holds up to three times what it keeps
 * while it grows. Pure: no I/O.
 */

const EMPTY = 0;
const DEFAULT_PAGE_BYTES = 1 << 20;

/** What {@link FirstUseIndex.record} knows of a key: its first row, that row's note, how often seen. */
export interface FirstUse {
  firstRow: number;
  firstNote: string | undefined;
  /** 1 for the first row with the key, 2 for the second, ... */
  occurrence: number;
}

export class FirstUseIndex {
  /** The entries' bytes (key, then note), back to back; an entry never spans two pages. */
  private readonly pages: Buffer[] = [];
  /** Bytes used in the last page. */
  private used = 0;
  private capacity = 1024;
  private pageOf: Uint32Array = new Uint32Array(this.capacity);
  private offsets: Uint32Array = new Uint32Array(this.capacity);
  private keyLengths: Uint32Array = new Uint32Array(this.capacity);
  private noteLengths: Uint32Array = new Uint32Array(this.capacity);
  private firstRows: Uint32Array = new Uint32Array(this.capacity);
  private counts: Uint32Array = new Uint32Array(this.capacity);
  /** A byte of each key's hash: a probe compares a key's bytes only when it matches (255 in 256 do not). */
  private tags: Uint8Array = new Uint8Array(this.capacity);
  private count = 0;
  /** Open addressing: slot → entry index + 1 (0 is empty); at most half full. */
  private slots = new Uint32Array(2048);
  private scratch = Buffer.alloc(256);

  /** @param pageBytes the size of a page of key bytes (a key longer than that gets a page of its own). */
  constructor(private readonly pageBytes = DEFAULT_PAGE_BYTES) {}

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
    const mask = this.slots.length - 1;
    const hash = fnv1a(this.scratch, 0, keyLength);
    const tag = hash >>> 24;
    let slot = hash & mask;
    for (;;) {
      const entry = this.slots[slot]!;
      if (entry === EMPTY) break;
      const i = entry - 1;
      if (this.tags[i] === tag && this.keyLengths[i] === keyLength && this.sameKey(i, keyLength)) {
        this.counts[i] = this.counts[i]! + 1;
        return { firstRow: this.firstRows[i]!, firstNote: this.noteOf(i), occurrence: this.counts[i]! };
      }
      slot = (slot + 1) & mask;
    }
    if (note !== undefined) this.scratch.write(note, keyLength, "utf8");
    this.append(keyLength, noteLength, tag, rowNumber);
    this.slots[slot] = this.count;
    if (this.count * 2 > this.slots.length) this.rehash();
    return { firstRow: rowNumber, firstNote: note, occurrence: 1 };
  }

  private sameKey(entry: number, length: number): boolean {
    const start = this.offsets[entry]!;
    return this.pages[this.pageOf[entry]!]!.compare(this.scratch, 0, length, start, start + length) === 0;
  }

  private noteOf(entry: number): string | undefined {
    const length = this.noteLengths[entry]!;
    if (length === 0) return undefined;
    const from = this.offsets[entry]! + this.keyLengths[entry]!;
    return this.pages[this.pageOf[entry]!]!.toString("utf8", from, from + length);
  }

  private append(keyLength: number, noteLength: number, tag: number, rowNumber: number): void {
    const length = keyLength + noteLength;
    const last = this.pages.length - 1;
    if (last < 0 || this.used + length > this.pages[last]!.length) {
      this.pages.push(Buffer.allocUnsafe(Math.max(this.pageBytes, length)));
      this.used = 0;
    }
    if (this.count === this.capacity) this.growEntries();
    this.scratch.copy(this.pages[this.pages.length - 1]!, this.used, 0, length);
    this.pageOf[this.count] = this.pages.length - 1;
    this.offsets[this.count] = this.used;
    this.keyLengths[this.count] = keyLength;
    this.noteLengths[this.count] = noteLength;
    this.firstRows[this.count] = rowNumber;
    this.counts[this.count] = 1;
    this.tags[this.count] = tag;
    this.used += length;
    this.count++;
  }

  private growEntries(): void {
    this.capacity = Math.ceil(this.capacity * 1.5);
    this.pageOf = grow(this.pageOf, new Uint32Array(this.capacity));
    this.offsets = grow(this.offsets, new Uint32Array(this.capacity));
    this.keyLengths = grow(this.keyLengths, new Uint32Array(this.capacity));
    this.noteLengths = grow(this.noteLengths, new Uint32Array(this.capacity));
    this.firstRows = grow(this.firstRows, new Uint32Array(this.capacity));
    this.counts = grow(this.counts, new Uint32Array(this.capacity));
    this.tags = grow(this.tags, new Uint8Array(this.capacity));
  }

  /** Twice the slots; each key's hash is taken again from its stored bytes (rare: a doubling). */
  private rehash(): void {
    const slots = new Uint32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let i = 0; i < this.count; i++) {
      let slot = fnv1a(this.pages[this.pageOf[i]!]!, this.offsets[i]!, this.keyLengths[i]!) & mask;
      while (slots[slot] !== EMPTY) slot = (slot + 1) & mask;
      slots[slot] = i + 1;
    }
    this.slots = slots;
  }
}

function grow<T extends Uint32Array | Uint8Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

/** FNV-1a (32 bits) of `length` bytes from `start`. */
function fnv1a(bytes: Buffer, start: number, length: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < start + length; i++) {
    hash ^= bytes[i]!;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
