/**
 * How far the heap may grow between full collections when the executable compacts a large
 * session. The main thread holds the session's model for the whole run, and runs chain tasks
 * whose garbage only a full collection frees (every one inline, the small ones with a pool: main/
 * small-session.ts); with V8's own growth factor such a run passes its peak-RSS budget, and a
 * bounded growth keeps it within. Inline, the bound also slows the scan, which runs on that
 * thread too, so it starts at a larger session there. Below these sizes the budget is far off and
 * the bound would only cost time. Figures: bench/RESULTS.md.
 *
 * V8 reads the flag each time it sets the next collection's limit, so it can change between the
 * sessions of one run. Only the `chainpress` executable sets it: a host (pi) keeps its own.
 */

import v8 from "node:v8";

/** The smallest session whose inline compaction is bounded. */
export const INLINE_BOUNDED_HEAP_MIN_BYTES = 128 * 1024 * 1024;
/** The smallest session whose compaction with a pool is bounded. */
export const POOL_BOUNDED_HEAP_MIN_BYTES = 64 * 1024 * 1024;
export const BOUNDED_HEAP_GROWING_PERCENT = 35;

/** The heap growth for compacting a session of `bytes` with `workers` workers; 0 leaves it to V8. */
export function heapGrowingPercentFor(workers: number, bytes: number): number {
  return bytes >= (workers === 0 ? INLINE_BOUNDED_HEAP_MIN_BYTES : POOL_BOUNDED_HEAP_MIN_BYTES) ? BOUNDED_HEAP_GROWING_PERCENT : 0;
}

/** Sets this process's heap growth (0: V8's own factor) for what it runs next. */
export function setHeapGrowingPercent(percent: number): void {
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/** Runs `work` with the heap's growth bounded when `percent` says so, then gives V8 its own factor back. */
export async function withHeapGrowth<T>(percent: number, work: () => Promise<T>): Promise<T> {
  if (percent === 0) return work();
  setHeapGrowingPercent(percent);
  try {
    return await work();
  } finally {
    setHeapGrowingPercent(0);
  }
}
