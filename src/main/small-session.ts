/**
 * Where a compaction stops being small. A session under this size is compacted on the calling
 * thread and read whole: a pool's start, the parallel scan and lightening cost it more than they
 * save (bench/RESULTS.md, "Small units"). A larger one keeps the pool and the scan, whose main
 * thread holds memory in proportion to the entries, not to the outputs.
 */
export const SMALL_SESSION_BYTES = 16 * 1024 * 1024;

export function isSmallSession(bytes: number): boolean {
  return bytes < SMALL_SESSION_BYTES;
}
