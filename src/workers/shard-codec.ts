/**
 * How a shard scan's lines travel from a worker to the main thread: msgpackr with record
 * structures. Measured on the 20x1M fixture, the main thread decodes that several times faster
 * than a structured clone of the same objects (35 ms against 208 ms), and the main thread is the
 * scan's bottleneck. msgpack cannot carry a lone surrogate (it writes UTF-8) and msgpackr renames
 * a `__proto__` key, so a line holding either travels by structured clone instead, in its place.
 */

import { Packr } from "msgpackr";
import { msgpackAlters } from "../core/well-formed.js";
import type { ScannedLine, ShardScan } from "./scan-task.js";

/** A ShardScan as posted by the worker. */
export interface ShardScanWire extends Omit<ShardScan, "lines"> {
  /** The lines, in order, packed in chunks; `null` where a line travels in `cloned`. */
  packed: Uint8Array[];
  cloned: ScannedLine[];
}

/**
 * Lines per packed chunk. The main thread decodes one chunk at a time between its turns of the
 * event loop: a whole 2 MiB shard decoded at once held it for 30-100 ms (measured, GC included).
 */
const CHUNK_LINES = 128;

const packr = new Packr({ useRecords: true });

/**
 * Packs a shard's lines a chunk at a time as they are scanned, so that no more than a chunk of
 * parsed lines is alive at once: holding a whole shard's made a worker's young generation promote
 * them, and old-generation collections were its largest cost (measured at 20x1M).
 */
export class ShardPacker {
  private readonly packed: Uint8Array[] = [];
  private readonly cloned: ScannedLine[] = [];
  private chunk: Array<ScannedLine | null> = [];

  add(line: ScannedLine): void {
    if (line.mayAlter && msgpackAlters(line)) {
      this.cloned.push(line);
      this.chunk.push(null);
    } else {
      this.chunk.push(line);
    }
    if (this.chunk.length === CHUNK_LINES) this.flush();
  }

  finish(rest: Omit<ShardScan, "lines">): ShardScanWire {
    this.flush();
    return { ...rest, packed: this.packed, cloned: this.cloned };
  }

  private flush(): void {
    if (this.chunk.length === 0) return;
    // pack() returns a view of a reused buffer: each chunk is copied before the next call.
    this.packed.push(Uint8Array.prototype.slice.call(packr.pack(this.chunk)));
    this.chunk = [];
  }
}

/** The scan with its lines decoded lazily, a chunk at a time, as they are iterated. */
export function decodeShardScan(wire: ShardScanWire): ShardScan {
  const { packed, cloned, ...rest } = wire;
  return { ...rest, lines: decodedLines(packed, cloned) };
}

function* decodedLines(packed: readonly Uint8Array[], cloned: readonly ScannedLine[]): Generator<ScannedLine> {
  let next = 0;
  for (const chunk of packed) {
    for (const line of packr.unpack(chunk) as Array<ScannedLine | null>) yield line ?? cloned[next++]!;
  }
}
