/**
 * Linear passes written as generators, so a caller on a busy thread can run them in slices: every
 * `yield` is a point where the work may pause (main/cooperative.ts hands the event loop a turn
 * there). Callers that want the answer at once run them to the end with `runSteps`. Pure.
 */

/** A computation that may pause at each `yield` and returns T. */
export type Steps<T> = Generator<undefined, T, undefined>;

/**
 * Items a loop handles between two pause points. A pause point that finds the slice unused costs a
 * microsecond; a step is what a loop may overshoot its slice by, so it stays small: one-pass loops
 * run in V8's baseline tiers (src/cli/main.ts raises the interrupt budget), where larger steps
 * outlasted the slice, and smaller ones cost no wall or CPU time (bench/RESULTS.md).
 */
export const ITEMS_PER_STEP = 256;

/** True at every ITEMS_PER_STEP-th item: the loop should `yield` there. */
export function stepDue(index: number): boolean {
  return index % ITEMS_PER_STEP === ITEMS_PER_STEP - 1;
}

/**
 * For loops whose items differ in cost (an index entry carries hundreds of records): `spend`
 * each item's units of work, and pause when it says so, every ITEMS_PER_STEP units.
 */
export class StepBudget {
  private spent = 0;

  /** Adds `units` of work; true when a pause is due (the count then starts over). */
  spend(units: number): boolean {
    this.spent += units;
    if (this.spent < ITEMS_PER_STEP) return false;
    this.spent = 0;
    return true;
  }
}

/** Runs the steps without pausing and returns their result. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}
