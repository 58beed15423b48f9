/**
 * Cooperative pauses for main-thread loops: a host's UI (pi's) and the progress bar get a turn
 * whenever a loop has held the thread for a few milliseconds, and a short loop pays nothing.
 */

import { performance } from "node:perf_hooks";
import { setImmediate as yieldToLoop } from "node:timers/promises";

/** Longest stretch of main-thread work between two turns of the event loop. */
export const SLICE_MS = 8;

/** A pause to await between steps: it yields only once `SLICE_MS` have passed since the last turn. */
export function cooperativePause(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < SLICE_MS) return;
    await yieldToLoop();
    since = performance.now();
  };
}
