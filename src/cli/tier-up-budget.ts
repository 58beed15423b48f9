/**
 * V8's tier-up budget for chainpress's own process (the `chainpress` executable, `npm start`).
 * Most of a compaction's loops run once per session and every worker compiles the same code
 * again, so a budget this large leaves short-lived code to V8's baseline tiers (figures:
 * bench/RESULTS.md). It is set here, not in the shebang: V8 12 (Node 22) dropped
 * `--interrupt-budget`, and node refuses to start with a V8 flag it does not know. V8 flags are
 * the process's, so the pool's threads, started later, run with it too.
 */

import v8 from "node:v8";

export const INTERRUPT_BUDGET = 300_000;

/** The newest V8 on which `--interrupt-budget` was checked to exist (Node 20's). */
const NEWEST_WITH_INTERRUPT_BUDGET: readonly [number, number] = [11, 3];

/** Whether a V8 of this version (`process.versions.v8`) has `--interrupt-budget`. */
export function hasInterruptBudget(v8Version: string): boolean {
  const [major = 0, minor = 0] = v8Version.split(".").map(Number);
  const [newestMajor, newestMinor] = NEWEST_WITH_INTERRUPT_BUDGET;
  return major < newestMajor || (major === newestMajor && minor <= newestMinor);
}

/** Raises the budget where this V8 has the flag; returns whether it did. */
export function raiseTierUpBudget(v8Version = process.versions.v8): boolean {
  if (!hasInterruptBudget(v8Version)) return false;
  v8.setFlagsFromString(`--interrupt-budget=${INTERRUPT_BUDGET}`);
  return true;
}
