/**
 * How far the heap may grow between full collections when a large session is compacted inline
 * (`--workers 0`). The main thread then holds the session's model for the whole run and also runs
 * every chain task, whose garbage only a full collection frees: with V8's own growth factor such a
 * run passes its peak-RSS budget, and a bounded growth keeps it within at the same wall time. Below
 * INLINE_BOUNDED_HEAP_MIN_BYTES the budget is far off and the bound would only cost time; with
 * workers the main thread runs no chain task. Figures: bench/RESULTS.md.
 *
 * V8 reads the flag each time it sets the next collection's limit, so it can change between the
 * sessions of one run. Only the `chainpress` executable sets it: a host (pi) keeps its own.
 */

import v8 from "node:v8";

export const INLINE_BOUNDED_HEAP_MIN_BYTES = 128 * 1024 * 1024;
export const INLINE_HEAP_GROWING_PERCENT = 35;

/** The heap growth for compacting a session of `bytes` with `workers` workers; 0 leaves it to V8. */
export function heapGrowingPercentFor(workers: number, bytes: number): number {
  return workers === 0 && bytes >= INLINE_BOUNDED_HEAP_MIN_BYTES ? INLINE_HEAP_GROWING_PERCENT : 0;
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
