/**
 * The commit of one chain, strictly in chain order: index entry appended → chain entry appended →
 * in-memory state changed only after each append succeeded (append-before-commit). Any failure
 * leaves the chain with the `no-summary` skip; the next pass retries and converges.
 */

import { buildBackfilledIndexData, buildChainEntry } from "../core/chain-entry.js";
import { CUSTOM_TYPE_CHAIN, CUSTOM_TYPE_INDEX } from "../core/custom-types.js";
import type { PruneState } from "../core/prune-state.js";
import type { ChainCompressionEntry } from "../core/prune-types.js";
import type { ChainTaskResult } from "../workers/chain-task.js";
import type { AppendEntry } from "./append-entry.js";
import type { CoveredPlan, DeterministicPlan } from "./plan-chains.js";

/** Raised when a chain cannot be committed; the message becomes the skip's cause. */
export class ChainCommitError extends Error {
  constructor(
    readonly chainStart: number,
    readonly stage: "worker" | "index-append" | "refs" | "chain-append",
    message: string,
  ) {
    super(`chain ${chainStart}: ${stage}: ${message}`);
    this.name = "ChainCommitError";
  }
}

export interface CommitContext {
  state: PruneState;
  append: AppendEntry;
  now: () => number;
}

/** Persist and commit the backfilled records, then the deterministic chain entry. */
export async function commitDeterministic(ctx: CommitContext, plan: DeterministicPlan, result: Pick<ChainTaskResult, "records" | "refs" | "body">): Promise<ChainCompressionEntry> {
  const start = plan.chain.startUserTimestamp;
  if (result.records.length > 0) {
    await appendOrFail(ctx, start, "index-append", CUSTOM_TYPE_INDEX, buildBackfilledIndexData(result.records, result.refs));
    for (const record of result.records) ctx.state.indexRecord(record, { seedDedup: false });
    for (const ref of result.refs) ctx.state.registerRef(ref);
  }
  const toolRefs = ctx.state.refsForKeys(plan.lookupKeys);
  if (toolRefs.join(",") !== plan.toolRefs.join(",")) {
    // The body already names plan.toolRefs; writing an entry that disagrees would mislead the model.
    throw new ChainCommitError(start, "refs", `refs changed during the pass (${plan.toolRefs.join(",")} → ${toolRefs.join(",")})`);
  }
  const entry = buildChainEntry({ chain: plan.chain, blockId: plan.blockId, toolRefs, compressedAt: ctx.now(), rangeSummaryText: result.body, deterministic: true });
  await appendOrFail(ctx, start, "chain-append", CUSTOM_TYPE_CHAIN, entry);
  ctx.state.registerChain(entry);
  return entry;
}

/** The covered path: upstream's entry shape unchanged (no fused text: chainpress makes no LLM calls). */
export async function commitCovered(ctx: CommitContext, plan: CoveredPlan): Promise<ChainCompressionEntry> {
  const toolRefs = ctx.state.refsForKeys(plan.lookupKeys);
  const entry = buildChainEntry({ chain: plan.chain, blockId: plan.blockId, toolRefs, compressedAt: ctx.now(), deterministic: false });
  await appendOrFail(ctx, plan.chain.startUserTimestamp, "chain-append", CUSTOM_TYPE_CHAIN, entry);
  ctx.state.registerChain(entry);
  return entry;
}

async function appendOrFail(ctx: CommitContext, start: number, stage: "index-append" | "chain-append", customType: string, data: unknown): Promise<void> {
  try {
    await ctx.append(customType, data);
  } catch (error) {
    throw new ChainCommitError(start, stage, (error as Error).message);
  }
}
