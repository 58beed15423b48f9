/**
 * Where each entry of a session lies in its file, kept in typed columns rather than as an object
 * per entry: as objects, the entries and their located-output arrays were a large share of the main
 * thread's heap, and the collector visited every one of them in each full collection. A location
 * is read back as an EntryLocation object only when someone asks.
 */

import type { EntryLocation, LineMeta } from "./loaded-session.js";
import { LITERAL_BYTES, LITERAL_DIGEST, LITERAL_FLAGS, LITERAL_JSON_LENGTH, LITERAL_MEASURES, LITERAL_OFFSET, LITERAL_UNITS, LITERAL_UTF8_BYTES, type OutputLiteral } from "./output-literal.js";

const NONE = -1;
const TERMINATED = 1;

type Block = Int32Array | Float64Array | Uint8Array | Uint32Array;

/** Items in a column's block: 16,384 (a power of two, so an item's block and slot are a shift and a mask). */
const BLOCK_BITS = 14;
const BLOCK_ITEMS = 1 << BLOCK_BITS;
const SLOT_MASK = BLOCK_ITEMS - 1;

/**
 * A typed column that grows a block at a time and never copies what it holds: doubling whole
 * columns copied them all at once, a stall of the main thread's event loop. `width` values per
 * item.
 */
class Column<T extends Block> {
  private readonly blocks: T[] = [];

  constructor(
    private readonly make: (length: number) => T,
    private readonly width = 1,
  ) {}

  get(item: number, field = 0): number {
    return this.blocks[item >>> BLOCK_BITS]![(item & SLOT_MASK) * this.width + field]!;
  }

  set(item: number, value: number, field = 0): void {
    const block = item >>> BLOCK_BITS;
    while (this.blocks.length <= block) this.blocks.push(this.make(BLOCK_ITEMS * this.width));
    this.blocks[block]![(item & SLOT_MASK) * this.width + field] = value;
  }
}

export class EntryLocations {
  private count = 0;
  private readonly lines = new Column((n) => new Int32Array(n));
  private readonly offsets = new Column((n) => new Float64Array(n));
  private readonly byteLengths = new Column((n) => new Float64Array(n));
  private readonly flags = new Column((n) => new Uint8Array(n));
  private readonly messageChars = new Column((n) => new Float64Array(n));
  /** Index into the output columns, or NONE. */
  private readonly outputOf = new Column((n) => new Int32Array(n));
  private outputs = 0;
  /** Per located output, its measures, each at its position in the literal (io/output-literal.ts). */
  private readonly outputMeasures = new Column((n) => new Float64Array(n), LITERAL_MEASURES);
  private readonly outputFlags = new Column((n) => new Uint8Array(n));
  /** The xxh64 digest as two 32-bit halves (16 hex digits). */
  private readonly outputDigests = new Column((n) => new Uint32Array(n), 2);

  /** Adds a location (the fields are copied: `meta` may carry the line's bytes, which must not stay alive); returns its index. */
  push(meta: LineMeta, messageChars: number | undefined, output: OutputLiteral | undefined): number {
    const i = this.count++;
    this.lines.set(i, meta.line);
    this.offsets.set(i, meta.byteOffset);
    this.byteLengths.set(i, meta.bytes);
    this.flags.set(i, meta.terminated ? TERMINATED : 0);
    this.messageChars.set(i, messageChars ?? NONE);
    this.outputOf.set(i, output === undefined ? NONE : this.pushOutput(output));
    return i;
  }

  line(i: number): number {
    return this.lines.get(i);
  }

  messageCharsAt(i: number): number | undefined {
    const chars = this.messageChars.get(i);
    return chars === NONE ? undefined : chars;
  }

  /** The location as the builder was given it (a fresh object each call). */
  at(i: number): EntryLocation {
    const location: EntryLocation = { line: this.lines.get(i), byteOffset: this.offsets.get(i), bytes: this.byteLengths.get(i), terminated: this.flags.get(i) === TERMINATED };
    const chars = this.messageCharsAt(i);
    if (chars !== undefined) location.messageChars = chars;
    const output = this.outputOf.get(i);
    if (output !== NONE) location.output = this.outputAt(output);
    return location;
  }

  private pushOutput(output: OutputLiteral): number {
    const k = this.outputs++;
    const measures = this.outputMeasures;
    measures.set(k, output[LITERAL_OFFSET], LITERAL_OFFSET);
    measures.set(k, output[LITERAL_BYTES], LITERAL_BYTES);
    measures.set(k, output[LITERAL_UNITS], LITERAL_UNITS);
    measures.set(k, output[LITERAL_JSON_LENGTH], LITERAL_JSON_LENGTH);
    measures.set(k, output[LITERAL_UTF8_BYTES], LITERAL_UTF8_BYTES);
    this.outputFlags.set(k, output[LITERAL_FLAGS]);
    const digest = output[LITERAL_DIGEST];
    if (!/^[0-9a-f]{16}$/.test(digest)) throw new Error(`internal error: output digest ${JSON.stringify(digest)} is not 16 hex digits`);
    this.outputDigests.set(k, Number.parseInt(digest.slice(0, 8), 16), 0);
    this.outputDigests.set(k, Number.parseInt(digest.slice(8), 16), 1);
    return k;
  }

  private outputAt(k: number): OutputLiteral {
    const digest = hex8(this.outputDigests.get(k, 0)) + hex8(this.outputDigests.get(k, 1));
    const n = (field: number) => this.outputMeasures.get(k, field);
    // In the literal's order (io/output-literal.ts).
    return [n(LITERAL_OFFSET), n(LITERAL_BYTES), n(LITERAL_UNITS), n(LITERAL_JSON_LENGTH), n(LITERAL_UTF8_BYTES), this.outputFlags.get(k), digest];
  }
}

function hex8(value: number): string {
  return value.toString(16).padStart(8, "0");
}
