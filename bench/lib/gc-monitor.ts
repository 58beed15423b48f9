/** Garbage-collection pauses on the main thread while some work runs (PerformanceObserver "gc"). */

import { constants, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";

export interface GcTotals {
  /** Scavenges (young generation), ms. */
  minorMs: number;
  /** Mark-sweep-compact (whole heap: grows with the live session), ms. */
  majorMs: number;
  /** Incremental marking and weak callbacks, ms. */
  otherMs: number;
  majorCount: number;
}

export function startGcMonitor(): { stop(): GcTotals } {
  const totals: GcTotals = { minorMs: 0, majorMs: 0, otherMs: 0, majorCount: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) add(totals, entry);
  });
  observer.observe({ entryTypes: ["gc"] });
  return {
    stop() {
      // Entries are delivered asynchronously; take what is buffered before disconnecting.
      for (const entry of observer.takeRecords()) add(totals, entry);
      observer.disconnect();
      return totals;
    },
  };
}

function add(totals: GcTotals, entry: PerformanceEntry): void {
  const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
  if (kind === constants.NODE_PERFORMANCE_GC_MINOR) totals.minorMs += entry.duration;
  else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
    totals.majorMs += entry.duration;
    totals.majorCount++;
  } else totals.otherMs += entry.duration;
}
