/** Main-thread event-loop delay while some async work runs (perf_hooks.monitorEventLoopDelay). */

import { monitorEventLoopDelay } from "node:perf_hooks";

export interface EventLoopDelay {
  /** Longest delay seen, in ms. */
  maxMs: number;
  /** 99th percentile delay, in ms. */
  p99Ms: number;
  meanMs: number;
}

/** Runs `work` with a 1 ms-resolution delay monitor; returns its value and the delay stats. */
export async function withEventLoopMonitor<T>(work: () => Promise<T>): Promise<{ value: T; delay: EventLoopDelay }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  try {
    const value = await work();
    // The histogram is in nanoseconds.
    const delay = { maxMs: histogram.max / 1e6, p99Ms: histogram.percentile(99) / 1e6, meanMs: histogram.mean / 1e6 };
    return { value, delay };
  } finally {
    histogram.disable();
  }
}
