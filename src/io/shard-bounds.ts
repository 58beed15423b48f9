/**
 * Cuts a session file into byte ranges that start and end at line boundaries, for the parallel
 * scan. Only the few bytes around each cut are read here: a cut moves forward to just after the
 * next "\n".
 */
import { open, type FileHandle } from "node:fs/promises";

/** How far a boundary search reads at first, and at most, at a time. */
const MIN_PROBE_BYTES = 4096;
const MAX_PROBE_BYTES = 1024 * 1024;

export interface ByteRange {
  start: number;
  end: number;
}

/** About `size / shardBytes` ranges covering [0, size), each made of whole lines. */
export async function shardBounds(file: string, size: number, shardBytes: number): Promise<ByteRange[]> {
  const step = Math.max(1, shardBytes);
  const cuts = [0];
  const handle = await open(file, "r");
  try {
    for (let target = step; target < size; ) {
      const cut = await nextLineStart(handle, Math.ceil(target), size);
      if (cut >= size) break;
      if (cut > cuts[cuts.length - 1]!) cuts.push(cut);
      // A line longer than a shard moves the next target past it; every turn advances a line.
      target = Math.max(target + step, cut + 1);
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
