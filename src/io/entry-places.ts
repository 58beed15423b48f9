/**
 * Where each entry of a session lies in its file, kept in typed columns rather than as an object
 * per entry: at 200x1M (237k entries, 128k located outputs) the objects and their located-output
 * arrays took ~40 MB of the main thread's heap, and the collector visited every one of them in
 * each full collection. A place is read back as an EntryLocation only when someone asks.
 */

import type { EntryLocation, LineMeta, OutputLiteral } from "./session-builder.js";

const NONE = -1;
const TERMINATED = 1;

type Column = Int32Array | Float64Array | Uint8Array | Uint32Array;

/** Grows a typed column to hold at least `length` items (doubling: each value is copied O(1) times). */
function grown<T extends Column>(column: T, length: number): T {
  if (length <= column.length) return column;
  const next = new (column.constructor as new (size: number) => T)(Math.max(length, column.length * 2));
  next.set(column);
  return next;
}

export class EntryPlaces {
  private count = 0;
  private lines = new Int32Array(1024);
  private offsets = new Float64Array(1024);
  private byteLengths = new Float64Array(1024);
  private flags = new Uint8Array(1024);
  private messageChars = new Float64Array(1024);
  /** Index into the output columns, or NONE. */
  private outputOf = new Int32Array(1024);
  private outputs = 0;
  /** offset, bytes, units, jsonLength, utf8Bytes per located output. */
  private outputNumbers = new Float64Array(5 * 256);
  private outputFlags = new Uint8Array(256);
  /** The xxh64 digest as two 32-bit halves (16 hex digits). */
  private outputDigests = new Uint32Array(2 * 256);

  /** Adds a place (the fields are copied: `meta` may carry the line's bytes, which must not stay alive); returns its index. */
  push(meta: LineMeta, messageChars: number | undefined, output: OutputLiteral | undefined): number {
    const i = this.count++;
    this.ensure(this.count);
    this.lines[i] = meta.line;
    this.offsets[i] = meta.byteOffset;
    this.byteLengths[i] = meta.bytes;
    this.flags[i] = meta.terminated ? TERMINATED : 0;
    this.messageChars[i] = messageChars ?? NONE;
    this.outputOf[i] = output === undefined ? NONE : this.pushOutput(output);
    return i;
  }

  line(i: number): number {
    return this.lines[i]!;
  }

  messageCharsAt(i: number): number | undefined {
    const chars = this.messageChars[i]!;
    return chars === NONE ? undefined : chars;
  }

  /** The place as the builder was given it (a fresh object each call). */
  at(i: number): EntryLocation {
    const place: EntryLocation = { line: this.lines[i]!, byteOffset: this.offsets[i]!, bytes: this.byteLengths[i]!, terminated: this.flags[i] === TERMINATED };
    const chars = this.messageCharsAt(i);
    if (chars !== undefined) place.messageChars = chars;
    const output = this.outputOf[i]!;
    if (output !== NONE) place.output = this.outputAt(output);
    return place;
  }

  private pushOutput(output: OutputLiteral): number {
    const k = this.outputs++;
    this.outputNumbers = grown(this.outputNumbers, 5 * this.outputs);
    this.outputFlags = grown(this.outputFlags, this.outputs);
    this.outputDigests = grown(this.outputDigests, 2 * this.outputs);
    const [offset, bytes, units, jsonLength, utf8Bytes, flags, digest] = output;
    const numbers = this.outputNumbers;
    numbers[5 * k] = offset;
    numbers[5 * k + 1] = bytes;
    numbers[5 * k + 2] = units;
    numbers[5 * k + 3] = jsonLength;
    numbers[5 * k + 4] = utf8Bytes;
    this.outputFlags[k] = flags;
    if (!/^[0-9a-f]{16}$/.test(digest)) throw new Error(`internal error: output digest ${JSON.stringify(digest)} is not 16 hex digits`);
    this.outputDigests[2 * k] = Number.parseInt(digest.slice(0, 8), 16);
    this.outputDigests[2 * k + 1] = Number.parseInt(digest.slice(8), 16);
    return k;
  }

  private outputAt(k: number): OutputLiteral {
    const n = this.outputNumbers;
    const digest = hex8(this.outputDigests[2 * k]!) + hex8(this.outputDigests[2 * k + 1]!);
    return [n[5 * k]!, n[5 * k + 1]!, n[5 * k + 2]!, n[5 * k + 3]!, n[5 * k + 4]!, this.outputFlags[k]!, digest];
  }

  private ensure(length: number): void {
    this.lines = grown(this.lines, length);
    this.offsets = grown(this.offsets, length);
    this.byteLengths = grown(this.byteLengths, length);
    this.flags = grown(this.flags, length);
    this.messageChars = grown(this.messageChars, length);
    this.outputOf = grown(this.outputOf, length);
  }
}

function hex8(value: number): string {
  return value.toString(16).padStart(8, "0");
}
