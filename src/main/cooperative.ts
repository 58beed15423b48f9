/**
 * Cooperative pauses for main-thread loops: a host's UI (pi's) and the progress bar get a turn
 * whenever a loop has held the thread for a few milliseconds, and a short loop pays nothing.
 */

import { performance } from "node:perf_hooks";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import type { Steps } from "../core/steps.js";

/** Longest stretch of main-thread work between two turns of the event loop. */
export const SLICE_MS = 8;

/** Runs pausable steps (core/steps.ts) to the end, giving the event loop a turn whenever a slice is used up. */
export async function driveSteps<T>(steps: Steps<T>): Promise<T> {
  const pause = cooperativePause();
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    await pause();
  }
}

/** A pause to await between steps: it yields only once `SLICE_MS` have passed since the last turn. */
export function cooperativePause(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < SLICE_MS) return;
    await yieldToLoop();
    since = performance.now();
  };
}
