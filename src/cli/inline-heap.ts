/**
 * How far the heap may grow between full collections when a large session is compacted inline
 * (`--workers 0`). The main thread then holds the session's model for the whole run (~250 MB of
 * heap at 200x1M) and also runs every chain task, whose garbage only a full collection frees; V8
 * lets the heap grow by its own factor before that, and the run peaked at 480-530 MB RSS against
 * its budget of 448 (0.5 × 396 MB + 250). A growth of 35% at most: 390-398 MB, the same wall time
 * in interleaved rounds, +2-15% CPU (the extra marking runs on another core); 20% cost more CPU
 * still, and two workers, whose main thread runs no chain task, were only slower with it
 * (bench/RESULTS.md, twenty-third pass).
 *
 * Below INLINE_BOUNDED_HEAP_MIN_BYTES the budget is far off (116 MB inline: 120 MB RSS against
 * 308) and the bound cost 4-5% of the wall time, so V8 keeps its own factor there.
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
