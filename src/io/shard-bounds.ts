/**
 * Cuts a session file into byte ranges that start and end at line boundaries, for the parallel
 * scan. Only the few bytes around each cut are read here: a cut moves forward to just after the
 * next "\n".
 */
import { open, type FileHandle } from "node:fs/promises";
import type { ShardSizer } from "../core/shard-sizes.js";

/** How far a boundary search reads at first, and at most, at a time. */
const MIN_PROBE_BYTES = 4096;
const MAX_PROBE_BYTES = 1024 * 1024;

export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Ranges covering [0, size), each made of whole lines: a range starting at `start` ends at the
 * first line start at or past `start + shardBytes` (the number, or what the sizer says there).
 */
export async function shardBounds(file: string, size: number, shardBytes: number | ShardSizer): Promise<ByteRange[]> {
  const sizeAt: ShardSizer = typeof shardBytes === "number" ? () => shardBytes : shardBytes;
  const step = (start: number) => Math.max(1, Math.ceil(sizeAt(start)));
  const cuts = [0];
  const handle = await open(file, "r");
  try {
    for (let target = step(0); target < size; ) {
      const cut = await nextLineStart(handle, target, size);
      if (cut >= size) break;
      cuts.push(cut);
      // Past a line longer than a shard too: every turn advances at least a line.
      target = cut + step(cut);
    }
  } finally {
    await handle.close();
  }
  return cuts.map((start, i) => ({ start, end: cuts[i + 1] ?? size }));
}

/** Offset just after the first "\n" at or after `from - 1` (so a cut already at a line start stays), or `size`. */
async function nextLineStart(handle: FileHandle, from: number, size: number): Promise<number> {
  // Most lines are short: start with a small read and grow it for the long ones.
  let probe = MIN_PROBE_BYTES;
  for (let pos = Math.max(0, from - 1); pos < size; pos += probe, probe = Math.min(2 * probe, MAX_PROBE_BYTES)) {
    const buffer = Buffer.allocUnsafe(Math.min(probe, size - pos));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, pos);
    if (bytesRead === 0) break;
    const newline = buffer.subarray(0, bytesRead).indexOf(0x0a);
    if (newline !== -1) return pos + newline + 1;
  }
  return size;
}
