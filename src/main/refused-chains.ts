/**
 * Chains the deterministic path refuses for good: their own data rules out a correct result on
 * every run (two outputs under one occurrence key, a record time no Date can hold). Such a chain
 * is a planned skip, not a failure: the run succeeds, the report warns, and a `backfill-skipped`
 * diagnostic records why, so the skip is never silent and never fails `compact` again and again.
 */

import type { ChainRange } from "../core/prune-types.js";
import type { SkipPlan } from "./plan-chains.js";

export function refusedPlan(chain: ChainRange, lookupKeys: string[], reason: string): SkipPlan {
  return {
    kind: "skip",
    chain,
    lookupKeys,
    cause: reason,
    permanent: true,
    diagnostic: { kind: "backfill-skipped", dedupKey: String(chain.startUserTimestamp), detail: `start=${chain.startUserTimestamp} reason=${reason}` },
  };
}
