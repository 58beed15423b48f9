/**
 * One archiving step for the open chain (issue 13): plan (plan-open-chain.ts), run the worker
 * task, then commit its index entry exactly as the closed-chain group commit does (append, sync,
 * then memory). Fail-closed: any failure leaves the state untouched and the outputs in the
 * context; the next step retries.
 */

import type { OpenChain } from "../core/detect-chains.js";
import type { OpenChainDecision, OpenChainSettings } from "../core/open-chain-policy.js";
import type { AgentMessage } from "../core/session-types.js";
import { commitIndexEntries, type ChainWork, type CommitContext } from "./commit-group.js";
import type { DeterministicPlan } from "./plan-chains.js";
import { planOpenChain } from "./plan-open-chain.js";

export interface OpenChainInput {
  open: OpenChain;
  settings: OpenChainSettings;
}

export interface OpenChainOutcome {
  decision: OpenChainDecision;
  /** Refs of the outputs archived by this step (none when nothing was, or on failure). */
  refs: string[];
  /** Why the chosen outputs were not archived. */
  failure?: string;
}

export async function compressOpenChain(
  input: OpenChainInput,
  messages: readonly AgentMessage[],
  graceKeys: ReadonlySet<string>,
  ctx: CommitContext,
  run: (plan: DeterministicPlan) => Promise<ChainWork>,
): Promise<OpenChainOutcome> {
  const { decision, plan } = planOpenChain(input.open, messages, ctx.state, graceKeys, input.settings);
  if (!plan) return { decision, refs: [] };
  let work: ChainWork;
  try {
    work = await run(plan);
  } catch (error) {
    return { decision, refs: [], failure: `worker failed: ${(error as Error).message}` };
  }
  const slot: { work: ChainWork; failure?: string } = { work };
  await commitIndexEntries(ctx, [slot]);
  if (slot.failure) return { decision, refs: [], failure: slot.failure };
  return { decision, refs: plan.reservedRefs };
}
