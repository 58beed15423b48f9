/**
 * Cuts a session file into byte ranges that start and end at line boundaries, for the parallel
 * scan. Only the few bytes around each cut are read here: a cut moves forward to just after the
 * next "\n".
 */
import { open } from "node:fs/promises";

/** How far a boundary search reads at a time. */
const PROBE_BYTES = 256 * 1024;

export interface ByteRange {
  start: number;
  end: number;
}

/** About `size / shardBytes` ranges covering [0, size), each made of whole lines. */
export async function shardBounds(file: string, size: number, shardBytes: number): Promise<ByteRange[]> {
  const count = Math.max(1, Math.ceil(size / Math.max(1, shardBytes)));
  const cuts = [0];
  const handle = await open(file, "r");
  try {
    const probe = Buffer.allocUnsafe(PROBE_BYTES);
    for (let k = 1; k < count; k++) {
      const from = Math.max(Math.floor((size * k) / count), cuts[cuts.length - 1]!);
      const cut = await nextLineStart(handle, probe, from, size);
      if (cut >= size) break;
      if (cut > cuts[cuts.length - 1]!) cuts.push(cut);
    }
  } finally {
    await handle.close();
  }
  return cuts.map((start, i) => ({ start, end: cuts[i + 1] ?? size }));
}

/** Offset just after the first "\n" at or after `from - 1` (so a cut already at a line start stays), or `size`. */
async function nextLineStart(handle: import("node:fs/promises").FileHandle, probe: Buffer, from: number, size: number): Promise<number> {
  for (let pos = Math.max(0, from - 1); pos < size; pos += PROBE_BYTES) {
    const { bytesRead } = await handle.read(probe, 0, Math.min(PROBE_BYTES, size - pos), pos);
    if (bytesRead === 0) break;
    const newline = probe.subarray(0, bytesRead).indexOf(0x0a);
    if (newline !== -1) return pos + newline + 1;
  }
  return size;
}
