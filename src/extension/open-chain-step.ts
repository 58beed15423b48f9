/**
 * The live open-chain step (issue 13): after each tool batch of a running chain, archive the
 * chain's older outputs when the policy says so (core/open-chain-policy.ts), so a long run's
 * context stops growing without waiting for the chain to close.
 *
 * Hooks and ordering:
 *   turn_end(toolResults)   → schedule a step; the handler returns at once (awaiting would hold
 *     pi's event queue, and with it pi's persistence of these very results),
 *   the step                → waits on the PersistGate until the batch's last result is on the
 *     branch, so its index entry follows the outputs it archives in the session file,
 *   then                    → asks the policy first (no worker pool is started for nothing), and
 *     runs compressEligible with no closed chains and the open one: same worker task, same
 *     fail-closed index commit as the closed-chain backfill. Refused if the branch changed.
 * The next `context` (the request that follows the batch) waits for the step, up to
 * `openChainWaitMs` (runtime.ts OPEN_CHAIN_WAIT_MS), so the stubs are in the very request after
 * the batch that triggered them whatever the machine's speed: the largest request does not depend
 * on load. In pi 0.73.1 `turn_end` may arrive after the next `context`, so the stubs can show up
 * one model call late; they are never early. Steps run on the runtime's SerialQueue, one pending
 * at most.
 */

import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { detectOpenChain } from "../core/detect-chains.js";
import type { AgentMessage } from "../core/session-types.js";
import { compressEligible } from "../main/compress-eligible.js";
import { openChainDecision } from "../main/plan-open-chain.js";
import { passInput, spillSettings } from "./compress-pass.js";
import { guard, notify } from "./report.js";
import { branchBoundAppend, type Chainpress } from "./runtime.js";
import { refreshStatusLine } from "./status.js";

/** What `/pruner` commands report while a step holds the queue. */
export const OPEN_CHAIN_LABEL = "archiving older outputs of the running chain";

export function handleTurnEnd(runtime: Chainpress, event: { toolResults?: unknown }, ctx: ExtensionContext): void {
  const results = Array.isArray(event.toolResults) ? (event.toolResults as AgentMessage[]) : [];
  const last = results[results.length - 1];
  if (!last || !runtime.settings.enabled || !runtime.settings.openChains.enabled || runtime.openChainQueued) return;
  runtime.openChainQueued = true;
  // Deliberately not awaited (see the header); failures are reported inside.
  const step: Promise<void> = runtime.queue
    .run(() => {
      runtime.openChainQueued = false;
      return guard(runtime, ctx, "open-chain archiving", undefined, () => stepOnce(runtime, last, ctx));
    }, OPEN_CHAIN_LABEL)
    .finally(() => {
      if (runtime.openChainStep === step) runtime.openChainStep = undefined;
    });
  runtime.openChainStep = step;
}

/** Resolves once the scheduled open-chain step has ended, or after `openChainWaitMs`, whichever comes first. */
export async function openChainStepSettled(runtime: Chainpress): Promise<void> {
  const step = runtime.openChainStep;
  if (step === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, runtime.openChainWaitMs)));
  try {
    await Promise.race([step, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function stepOnce(runtime: Chainpress, lastResult: AgentMessage, ctx: ExtensionContext): Promise<void> {
  const { settings } = runtime;
  if (!settings.enabled || !settings.openChains.enabled) return;
  const generation = runtime.holder.generation;
  // Not persisted in time: the outputs stay in the context and the next turn tries again.
  if (!(await runtime.gate.persisted(lastResult, ctx.sessionManager))) return;
  const input = await passInput(runtime, ctx.sessionManager);
  const open = detectOpenChain(input.messages, runtime.isProtected);
  if (!open || generation !== runtime.holder.generation) return;
  const state = runtime.holder.state;
  const decision = openChainDecision(open, input.messages, state, input.graceKeys, settings.openChains);
  if (decision.keys.length === 0) {
    // Half way to the trigger: start the worker pool now, so the step that follows is not late
    // by the threads' start-up (several tool calls' worth on a fast run).
    if (decision.outsideTokens * 2 > settings.openChains.triggerTokens) runtime.runner.get();
    return;
  }
  const result = await compressEligible({
    messages: input.messages,
    chains: [],
    state,
    rollingWindow: 0,
    graceKeys: input.graceKeys,
    append: branchBoundAppend(runtime, generation),
    diagnostics: runtime.holder.diagnostics,
    spill: spillSettings(runtime, ctx.sessionManager),
    runner: runtime.runner.get(),
    openChain: { open, settings: settings.openChains },
  });
  const failure = result.openChain?.failure;
  if (failure && !runtime.holder.errors.includes(failure)) {
    // Said once per cause: a persistent failure would otherwise warn at every turn.
    runtime.holder.recordError(failure);
    notify(ctx, `pruner: older outputs of the running chain left in the context, retried at the next turn: ${failure}`, "warning");
  }
  refreshStatusLine(runtime, ctx);
}
