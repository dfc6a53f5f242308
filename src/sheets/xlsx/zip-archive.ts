/**
 * The zip container of an XLSX, read with yauzl: its central directory first (so parts are found
 * whatever order the writer put them in), then each part's local header, which places its data. The
 * data itself is read by random access and inflated by Node's zlib in 64 KB pieces: yauzl's own
 * `openReadStream` inflates in 16 KB pieces through an extra counting stream, which on a 40 MB
 * worksheet costs more than the inflating itself (the reader counts the bytes as it decodes them).
 *
 * Every part is bounded before a byte of it is inflated, by what the central directory declares: its
 * inflated size (`maxPartBytes`, or `maxSmallPartBytes` for the parts read whole) and its ratio to the
 * compressed size (`maxInflateRatio`, the zip bomb's tell). The reader counts the inflated bytes against
 * the declared size (`checkInflated`), so a part that lies about its size fails there instead of growing.
 */
import { createReadStream } from "node:fs";
import { pipeline, Readable } from "node:stream";
import { createInflateRaw } from "node:zlib";
import yauzl from "yauzl";
import { limitExceeded, RATIO_CHECK_AFTER_BYTES, type SheetLimits } from "../limits.js";
import { SheetReadError } from "../types.js";

/** More entries than this is no workbook (Excel writes a few dozen); each one costs memory to list. */
const MAX_ENTRIES = 100_000;
const STORED = 0;
const DEFLATED = 8;
const CHUNK_BYTES = 64 * 1024;

/** One part (zip entry) of the workbook. */
export interface ZipPart {
  /** Its path in the zip, without a leading "/" (`xl/workbook.xml`). */
  name: string;
  compressedSize: number;
  uncompressedSize: number;
  entry: yauzl.Entry;
}

/** How a part is read: streamed (worksheets, shared strings) or whole (workbook, relationships, styles). */
export type PartKind = "streamed" | "whole";

function damaged(why: string, cause?: unknown): SheetReadError {
  return new SheetReadError(
    "FILE_CORRUPT",
    `the workbook is damaged (${why}); save it again`,
    cause === undefined ? undefined : { cause },
  );
}

export class ZipArchive {
  private constructor(
    private readonly path: string,
    private readonly zip: yauzl.ZipFile,
    private readonly parts: ReadonlyMap<string, ZipPart>,
    private readonly limits: SheetLimits,
  ) {}

  /** Reads the central directory. FILE_CORRUPT when the file is no readable zip. */
  static async open(path: string, limits: SheetLimits): Promise<ZipArchive> {
    let zip: yauzl.ZipFile;
    try {
      zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
        yauzl.open(
          path,
          { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false },
          (err, opened) => (err || !opened ? reject(err) : resolve(opened)),
        ),
      );
    } catch (cause) {
      throw damaged("not a readable zip file", cause);
    }
    try {
      if (zip.entryCount > MAX_ENTRIES) throw damaged(`it lists ${zip.entryCount} parts`);
      const parts = await listParts(zip);
      return new ZipArchive(path, zip, parts, limits);
    } catch (error) {
      zip.close();
      throw error instanceof SheetReadError ? error : damaged("its list of parts cannot be read", error);
    }
  }

  part(name: string): ZipPart | undefined {
    return this.parts.get(name);
  }

  /**
   * The part's inflated bytes as a stream. Refuses, before inflating anything, a part larger than its
   * kind allows or inflating more than `maxInflateRatio` times its compressed size.
   */
  async openPart(part: ZipPart, kind: PartKind): Promise<Readable> {
    this.checkBounds(part, kind);
    const { entry } = part;
    if (entry.isEncrypted()) {
      throw new SheetReadError(
        "UNSUPPORTED_FORMAT",
        "the workbook's parts are encrypted; remove the password and save it again",
      );
    }
    if (entry.compressionMethod !== STORED && entry.compressionMethod !== DEFLATED) {
      throw damaged(
        `${part.name} is compressed with method ${entry.compressionMethod}, which Excel never uses`,
      );
    }
    let fileDataStart: number;
    try {
      ({ fileDataStart } = await this.zip.readLocalFileHeaderPromise(entry, { minimal: true }));
    } catch (cause) {
      throw damaged(`${part.name}: ${cause instanceof Error ? cause.message : String(cause)}`, cause);
    }
    if (part.compressedSize === 0) return Readable.from([]);
    const source = createReadStream(this.path, {
      start: fileDataStart,
      end: fileDataStart + part.compressedSize - 1,
      highWaterMark: CHUNK_BYTES,
    });
    if (entry.compressionMethod === STORED) return source;
    // pipeline destroys both streams when either fails or the reader stops early; the error itself
    // reaches the reader through the inflater, so the callback has nothing left to do.
    return pipeline(source, createInflateRaw({ chunkSize: CHUNK_BYTES }), () => {});
  }

  /**
   * Throws once a part has inflated to more bytes than its entry declared (a zip bomb that lies about
   * its size to pass `openPart`'s checks). Call with the running total as bytes arrive.
   */
  checkInflated(part: ZipPart, inflatedBytes: number): void {
    if (inflatedBytes > part.uncompressedSize) {
      throw damaged(`${part.name} holds more data than its zip entry declares`);
    }
  }

  close(): void {
    this.zip.close();
  }

  private checkBounds(part: ZipPart, kind: PartKind): void {
    // The ratio first: it is the zip bomb's tell, and the more useful thing to be told.
    const ratio = part.uncompressedSize / Math.max(1, part.compressedSize);
    if (part.uncompressedSize > RATIO_CHECK_AFTER_BYTES && ratio > this.limits.maxInflateRatio) {
      throw limitExceeded(
        "maxInflateRatio",
        `${part.name} inflates to ${Math.round(ratio)} times its compressed size,`,
        this.limits,
      );
    }
    const limit = kind === "whole" ? "maxSmallPartBytes" : "maxPartBytes";
    if (part.uncompressedSize > this.limits[limit]) {
      throw limitExceeded(limit, `${part.name} inflates to`, this.limits);
    }
  }
}

/** Every entry of the central directory by name (a later entry of the same name wins, as Excel reads). */
function listParts(zip: yauzl.ZipFile): Promise<Map<string, ZipPart>> {
  return new Promise((resolve, reject) => {
    const parts = new Map<string, ZipPart>();
    zip.on("entry", (entry: yauzl.Entry) => {
      const name = entry.fileName.replace(/^\//, "");
      parts.set(name, {
        name,
        compressedSize: entry.compressedSize,
        uncompressedSize: entry.uncompressedSize,
        entry,
      });
      zip.readEntry();
    });
    zip.once("end", () => resolve(parts));
    zip.once("error", reject);
    zip.readEntry();
  });
}
