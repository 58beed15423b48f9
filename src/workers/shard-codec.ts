/**
 * How a shard scan's lines travel from a worker to the main thread: as JSON text, one string per
 * chunk of lines. Everything a scanned line holds came from JSON or is a count, so JSON gives it
 * back exactly (a lone surrogate and a `__proto__` key included, which msgpack alters), and V8's
 * JSON.parse builds the main thread's entries as compactly as parsing the line itself would:
 * short repeated strings shared, no substrings pinning a larger decoded string. Measured against
 * msgpackr records, whose decoder made 4.5× the short strings and 90k sliced strings at 20x1M:
 * the main thread's heap after the scan 39 → 30 MB at 20x1M and 304 → 216 MB at 200x1M; encoding
 * in the workers 105 → 62 ms and decoding on the main thread ~78 ms either way (20x1M).
 */

import type { ScannedLine, ShardScan } from "./scan-task.js";

/** A ShardScan as posted by the worker. */
export interface ShardScanWire extends Omit<ShardScan, "lines"> {
  /** The lines, in order: each chunk is the JSON of an array of ScannedLine. */
  chunks: string[];
}

/**
 * Lines per chunk. The main thread decodes one chunk at a time between its turns of the event
 * loop: a whole 2 MiB shard decoded at once held it for 30-100 ms (measured, GC included).
 */
const CHUNK_LINES = 128;

/**
 * Serialises a shard's lines a chunk at a time as they are scanned, so that no more than a chunk
 * of parsed lines is alive at once: holding a whole shard's made a worker's young generation
 * promote them, and old-generation collections were its largest cost (measured at 20x1M).
 */
export class ShardPacker {
  private readonly chunks: string[] = [];
  private chunk: ScannedLine[] = [];

  add(line: ScannedLine): void {
    this.chunk.push(line);
    if (this.chunk.length === CHUNK_LINES) this.flush();
  }

  finish(rest: Omit<ShardScan, "lines">): ShardScanWire {
    this.flush();
    return { ...rest, chunks: this.chunks };
  }

  private flush(): void {
    if (this.chunk.length === 0) return;
    this.chunks.push(JSON.stringify(this.chunk));
    this.chunk = [];
  }
}

/** The scan with its lines decoded lazily, a chunk at a time, as they are iterated. */
export function decodeShardScan(wire: ShardScanWire): ShardScan {
  const { chunks, ...rest } = wire;
  return { ...rest, lines: decodedLines(chunks) };
}

function* decodedLines(chunks: readonly string[]): Generator<ScannedLine> {
  for (const chunk of chunks) {
    for (const line of JSON.parse(chunk) as ScannedLine[]) {
      // JSON writes a missing message length (an entry that is not a message) as null.
      if (line.messageChars?.includes(null as unknown as undefined)) line.messageChars = line.messageChars.map((chars) => chars ?? undefined);
      yield line;
    }
  }
}
