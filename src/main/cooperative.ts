/**
 * Cooperative pauses for main-thread loops: a host's UI (pi's) and the progress bar get a turn
 * whenever the thread has been held for a few milliseconds, and a short loop pays nothing.
 *
 * The slice belongs to the thread, not to a loop: loops run one after another or inside each
 * other (a chain's planning drives a span loop, then the next chain's), and a slice that started
 * afresh with each of them let back-to-back loops hold the thread for several slices though each
 * kept to its own. So the slice and its queue are this module's: one per thread, as the event
 * loop is.
 */

import { performance } from "node:perf_hooks";
import type { Steps } from "../core/steps.js";

/**
 * Longest stretch of main-thread work between two turns of the event loop. A stall is a slice plus
 * whatever lands in it (a scavenge, a few milliseconds of waiting for a core), so a shorter slice
 * shortens the longest stall; this one costs no wall time (bench/RESULTS.md).
 */
export const SLICE_MS = 4;

/**
 * When the current slice began: the last turn a pause gave the event loop. A turn the loop took
 * while the thread waited (for a worker, for a write) is not seen, so the first pause after a
 * wait may yield early: a spare turn costs microseconds, a missed one a stall.
 */
let sliceStart = performance.now();

/** Callers waiting for a turn, first come first served. */
const waiting: Array<() => void> = [];

/**
 * Gives the event loop a turn if this thread's slice is used up; otherwise returns at once.
 * Several loops may wait at once (chains being prepared while others commit): each turn of the
 * event loop resumes one of them, with a fresh slice, and the next waits for the next turn.
 * Resuming them all at once ran them back to back, each believing it had a whole slice.
 */
export async function pauseIfDue(): Promise<void> {
  if (sliceUsedUp()) await ownTurn();
}

/**
 * Waits for a turn of the event loop of its own, however much of the slice is left: for one long
 * synchronous call that cannot be sliced (a host's write of a megabyte entry), which must not share
 * its turn with a slice of another loop. Follow that call with `endSlice`.
 */
export function ownTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    if (waiting.length === 1) setImmediate(giveTurn);
  });
}

/** Marks the slice used up, so the next pause gives the event loop a turn. */
export function endSlice(): void {
  sliceStart = Number.NEGATIVE_INFINITY;
}

/** True when this thread's slice is used up: a loop with many cheap items checks this before awaiting pauseIfDue. */
export function sliceUsedUp(): boolean {
  return performance.now() - sliceStart >= SLICE_MS;
}

function giveTurn(): void {
  sliceStart = performance.now();
  waiting.shift()!();
  // Scheduled from the check phase, the next immediate runs in the next iteration of the loop:
  // timers and I/O get their turn in between.
  if (waiting.length > 0) setImmediate(giveTurn);
}

/** Runs pausable steps (core/steps.ts) to the end, giving the event loop a turn whenever the slice is used up. */
export async function driveSteps<T>(steps: Steps<T>): Promise<T> {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    await pauseIfDue();
  }
}
