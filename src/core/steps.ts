/**
 * Linear passes written as generators, so a caller on a busy thread can run them in slices: every
 * `yield` is a point where the work may pause (main/cooperative.ts hands the event loop a turn
 * there). Callers that want the answer at once run them to the end with `runSteps`. Pure.
 */

/** A computation that may pause at each `yield` and returns T. */
export type Steps<T> = Generator<undefined, T, undefined>;

/**
 * Items a loop handles between two pause points. A pause point that finds the slice unused costs a
 * microsecond; a step is what a loop may overshoot its slice by (at 2048, steps of the model's
 * entry loops ran 14-16 ms at 200x1M, a map's doubling included: measured). 256 since the
 * executable raised V8's interrupt budget (src/cli/main.ts): a one-pass loop then runs longer in
 * the baseline tiers, and 1024 of its items took 20-27 ms at 200x1M (the model's and the branch
 * walk's steps); 20x1M's wall and CPU are the same either way (measured, interleaved).
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
