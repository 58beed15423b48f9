/**
 * Where a compaction stops being small. A session under this size is compacted on the calling
 * thread, read whole and planned from memory: a pool's start, the parallel scan and the file
 * route's bookkeeping cost it more than they save (bench/RESULTS.md, "Small sessions"). A larger
 * one keeps the pool, the scan and the file route, whose memory stays proportional to its entries.
 */
export const SMALL_SESSION_BYTES = 16 * 1024 * 1024;

export function isSmallSession(bytes: number): boolean {
  return bytes < SMALL_SESSION_BYTES;
}
