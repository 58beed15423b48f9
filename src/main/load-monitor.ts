/**
 * What one compaction costs the process it runs in: the longest event-loop stall (what a host's
 * UI, pi's for instance, would feel) and the peak resident memory, both sampled while it runs.
 */

import { monitorEventLoopDelay } from "node:perf_hooks";

export interface LoadFigures {
  /** Longest event-loop delay seen, in milliseconds. */
  eventLoopMaxMs: number;
  /** Peak resident set size of the process during the compaction, in bytes. */
  peakRssBytes: number;
}

/** Sampling is the fallback (the kernel's high-water mark usually answers), and each sample costs time. */
const SAMPLE_MS = 100;

export interface LoadMonitor {
  /** Ends the measurement (idempotent: later calls return the same figures). */
  stop(): LoadFigures;
}

export function startLoadMonitor(): LoadMonitor {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const maxRssBefore = process.resourceUsage().maxRSS * 1024;
  let sampled = process.memoryUsage.rss();
  const timer = setInterval(() => {
    sampled = Math.max(sampled, process.memoryUsage.rss());
  }, SAMPLE_MS);
  timer.unref();
  let figures: LoadFigures | undefined;
  return {
    stop() {
      if (figures) return figures;
      clearInterval(timer);
      delay.disable();
      sampled = Math.max(sampled, process.memoryUsage.rss());
      // The kernel's high-water mark is exact, but covers the whole process life: it speaks for
      // this compaction only when the compaction raised it.
      const maxRss = process.resourceUsage().maxRSS * 1024;
      figures = { eventLoopMaxMs: delay.max / 1e6, peakRssBytes: maxRss > maxRssBefore ? maxRss : sampled };
      return figures;
    },
  };
}
