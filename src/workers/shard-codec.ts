/**
 * How a shard scan's lines travel from a worker to the main thread: as JSON text (Latin-1: every
 * other character escaped), a chunk of lines at a time, in one buffer per shard that is moved,
 * not copied. Everything a scanned line holds came from JSON or is a count, so JSON gives it
 * back exactly (a lone surrogate and a `__proto__` key included, which msgpack alters), and V8's
 * JSON.parse builds the main thread's entries as compactly as parsing the line itself would:
 * short repeated strings shared, no substrings pinning a larger decoded string. msgpackr records
 * made many more short and sliced strings: a larger main-thread heap after the scan, and slower
 * encoding in the workers (bench/RESULTS.md).
 */

import { ByteSink } from "../core/byte-sink.js";
import { LITERAL_WIDTH, type OutputLiteral } from "../io/output-literal.js";
import type { ScannedLine, ShardScan } from "./scan-task.js";
import { jsonText } from "../core/json-text.js";

/** A ShardScan as posted by the worker. */
export interface ShardScanWire extends Omit<ShardScan, "lines"> {
  /**
   * The lines, in order, as Latin-1 JSON: chunk i is the JSON of a PackedChunk, in `text` from
   * `ends[i - 1]` (or 0) to `ends[i]`. Bytes in a buffer of their own, moved to the
   * main thread, not strings: strings arrive in the main thread's heap all at once, survive there
   * until the builder reaches their shard, and left a large session's scan as dead strings in its
   * old generation. A buffer's bytes live outside the heap, and the
   * main thread lets them go as soon as its shard is decoded.
   */
  text: Uint8Array;
  ends: number[];
}

/**
 * Lines per chunk. The main thread decodes one chunk at a time between its turns of the event
 * loop: a whole shard decoded at once held it far longer than a slice.
 */
const CHUNK_LINES = 128;

/**
 * A chunk of lines in columns: a line whose result is one value (nearly all of them) is five
 * numbers in `meta` (index, byte offset, bytes, flags, the message's JSON length or -1), its
 * value in `values`, and its located output, when it has one, in `outputs` (the OutputLiteral's
 * LITERAL_WIDTH items, in its order: io/output-literal.ts). Any other line is five numbers too,
 * its whole ScannedLine in `values`. As objects, each line's own keys and wrappers were about a
 * third of the text that the worker wrote and escaped and the main thread parsed.
 */
type PackedChunk = [meta: number[], outputs: Array<number | string>, values: unknown[]];

/** `meta` numbers per line, and what `flags` says. */
const META_WIDTH = 5;
const TERMINATED = 1;
const HAS_OUTPUT = 2;
const WHOLE_LINE = 4;
/** A value's message length when the value is not a message entry. */
const NO_CHARS = -1;

function packChunk(lines: readonly ScannedLine[]): PackedChunk {
  const meta: number[] = [];
  const outputs: Array<number | string> = [];
  const values: unknown[] = [];
  for (const line of lines) {
    const chars = line.messageChars;
    if (line.result.kind !== "value" || chars?.length !== 1) {
      meta.push(line.index, line.byteOffset, line.bytes, WHOLE_LINE, NO_CHARS);
      values.push(line);
      continue;
    }
    let flags = line.terminated ? TERMINATED : 0;
    if (line.output) {
      flags |= HAS_OUTPUT;
      outputs.push(...line.output);
    }
    meta.push(line.index, line.byteOffset, line.bytes, flags, chars[0] ?? NO_CHARS);
    values.push(line.result.value);
  }
  return [meta, outputs, values];
}

function* unpackChunk([meta, outputs, values]: PackedChunk): Generator<ScannedLine> {
  let output = 0;
  for (let at = 0, v = 0; at < meta.length; at += META_WIDTH, v++) {
    const flags = meta[at + 3]!;
    if ((flags & WHOLE_LINE) !== 0) {
      const line = values[v] as ScannedLine;
      // JSON writes a missing message length (an entry that is not a message) as null.
      if (line.messageChars?.includes(null as unknown as undefined)) line.messageChars = line.messageChars.map((chars) => chars ?? undefined);
      yield line;
      continue;
    }
    const chars = meta[at + 4]!;
    const line: ScannedLine = { index: meta[at]!, byteOffset: meta[at + 1]!, bytes: meta[at + 2]!, terminated: (flags & TERMINATED) !== 0, result: { kind: "value", value: values[v] } };
    line.messageChars = [chars === NO_CHARS ? undefined : chars];
    if ((flags & HAS_OUTPUT) !== 0) {
      line.output = outputs.slice(output, output + LITERAL_WIDTH) as OutputLiteral;
      output += LITERAL_WIDTH;
    }
    yield line;
  }
}

/**
 * Serialises a shard's lines a chunk at a time as they are scanned, so that no more than a chunk
 * of parsed lines is alive at once: holding a whole shard's made a worker's young generation
 * promote them, and old-generation collections were its largest cost. Each
 * chunk's text is written into the shard's buffer at once, outside the heap: kept as strings
 * until the shard ended, they outlived the worker's scavenges and were promoted too.
 */
export class ShardPacker {
  /** The chunks' Latin-1 JSON, one character a byte, back to back. */
  private readonly text: ByteSink;
  private readonly ends: number[] = [];
  private chunk: ScannedLine[] = [];

  /** `expectedBytes`: a guess of the text's size (it grows by doubling past it). */
  constructor(expectedBytes = 256 * 1024) {
    this.text = new ByteSink(Math.max(1024, expectedBytes));
  }

  add(line: ScannedLine): void {
    this.chunk.push(line);
    if (this.chunk.length === CHUNK_LINES) this.flush();
  }

  finish(rest: Omit<ShardScan, "lines">): ShardScanWire {
    this.flush();
    // One buffer of exactly the text's size, its own (never a slice of a shared pool): it is
    // moved, not copied, to the main thread.
    const text = new Uint8Array(new ArrayBuffer(this.text.length));
    text.set(this.text.bytes());
    return { ...rest, text, ends: this.ends };
  }

  private flush(): void {
    if (this.chunk.length === 0) return;
    const json = latin1Json(jsonText(packChunk(this.chunk)));
    this.chunk = [];
    this.text.addLatin1(json);
    this.ends.push(this.text.length);
  }
}

/** Code units Latin-1 cannot hold as one byte. */
const ABOVE_LATIN1 = /[\u0100-\uffff]/g;

/**
 * The JSON with every code unit above U+00FF written as a \u escape: the same value to JSON.parse
 * (a pair's halves escaped one by one parse back to the pair), and text the main thread reads as
 * Latin-1, byte for byte. V8 decodes Latin-1 at memory speed, and UTF-8 holding any non-ASCII
 * character on its slow path. Latin-1 rather than ASCII because the placeholders of lightened
 * strings (core/light-placeholder.ts) are delimited by U+0091 and U+0092: nearly every line holds two,
 * and escaping them would cost a callback's replacement each.
 */
function latin1Json(json: string): string {
  return json.replace(ABOVE_LATIN1, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The buffers to move with a wire (postMessage's transfer list). */
export function wireTransferList(wire: ShardScanWire): ArrayBuffer[] {
  return [wire.text.buffer as ArrayBuffer];
}

/** The scan with its lines decoded lazily, a chunk at a time, as they are iterated. */
export function decodeShardScan(wire: ShardScanWire): ShardScan {
  const { text, ends, ...rest } = wire;
  return { ...rest, lines: decodedLines(text, ends) };
}

function* decodedLines(text: Uint8Array, ends: readonly number[]): Generator<ScannedLine> {
  const latin1 = Buffer.from(text.buffer, text.byteOffset, text.byteLength);
  let start = 0;
  for (const end of ends) {
    yield* unpackChunk(JSON.parse(latin1.toString("latin1", start, end)) as PackedChunk);
    start = end;
  }
  releaseNow(text.buffer as ArrayBuffer);
}

/**
 * Frees a decoded shard's bytes at the next minor GC instead of the next full one: the buffer's
 * wrapper has usually been promoted while its shard waited its turn, and only a full collection
 * would let it go. Moving the bytes to a fresh wrapper that nothing holds detaches the old one.
 */
function releaseNow(buffer: ArrayBuffer): void {
  if (buffer.byteLength > 0) structuredClone(buffer, { transfer: [buffer] });
}
