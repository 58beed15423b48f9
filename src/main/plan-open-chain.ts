/**
 * Planning one archiving step for the chain still open at the end of the branch (issue 13), on
 * the main thread: classify its outputs, let the policy choose (core/open-chain-policy.ts), and
 * reserve `t<N>` refs for the chosen ones. The result is an ordinary deterministic plan marked
 * `open`: a worker archives its outputs exactly as for a closed chain (same records, spill rules
 * and index entry), but writes no body, and no chain entry follows. When the chain closes, the
 * closed-chain retry path finds these members indexed and composes over them.
 */

import type { OpenChain } from "../core/detect-chains.js";
import { contentText, extractionArgs } from "../core/message-text.js";
import { decideOpenChain, estimateOutputTokens, estimateTokens, type OpenChainDecision, type OpenChainSettings, type OpenOutput } from "../core/open-chain-policy.js";
import type { PruneState } from "../core/prune-state.js";
import { nonTextParts, type ArchivedPart } from "../core/archived-parts.js";
import { archivedOutputStubText } from "../core/render/archived-output-stub.js";
import type { AgentMessage, ToolResultMessage } from "../core/session-types.js";
import { spanOutputs, type SpanOutput } from "../core/extract-records.js";
import type { DeterministicPlan } from "./plan-chains.js";

/** A ref as long as any the stub will print, for the reclaim estimate. */
const WIDEST_REF = "t999999";

export interface OpenChainPlanning {
  decision: OpenChainDecision;
  /** Set when the decision archives something. */
  plan?: DeterministicPlan;
}

/** The policy's decision alone: reserves nothing, so callers may ask before starting any work. */
export function openChainDecision(
  open: OpenChain,
  messages: readonly AgentMessage[],
  state: PruneState,
  graceKeys: ReadonlySet<string>,
  settings: OpenChainSettings,
): OpenChainDecision {
  return decide(open, messages, state, graceKeys, settings).decision;
}

function decide(open: OpenChain, messages: readonly AgentMessage[], state: PruneState, graceKeys: ReadonlySet<string>, settings: OpenChainSettings) {
  const inner = messages.slice(open.startIndex + 1);
  const protectedIds = new Set(open.chain.protectedToolCallIds);
  const found = [...spanOutputs(inner, new Set(), () => false)];
  const outputs = found.map((output) => classify(output, state, graceKeys, protectedIds));
  return { inner, found, decision: decideOpenChain(outputs, settings) };
}

export function planOpenChain(
  open: OpenChain,
  messages: readonly AgentMessage[],
  state: PruneState,
  graceKeys: ReadonlySet<string>,
  settings: OpenChainSettings,
): OpenChainPlanning {
  const { inner, found, decision } = decide(open, messages, state, graceKeys, settings);
  if (decision.keys.length === 0) return { decision };
  if (new Set(decision.keys).size !== decision.keys.length) {
    // Two outputs under one occurrence key cannot both be recovered by ref: archive nothing.
    return { decision: { ...decision, keys: [], reason: "below-min-reclaim" } };
  }
  // The worker needs the span only up to the last chosen output.
  const last = inner.indexOf(found.find((output) => output.key === decision.keys[decision.keys.length - 1])!.result);
  const reservedRefs = state.reserveRefs(decision.keys.length);
  const chosen = new Set(decision.keys);
  const plan: DeterministicPlan = {
    kind: "deterministic",
    open: true,
    chain: open.chain,
    lookupKeys: decision.keys,
    blockId: "",
    inner: inner.slice(0, last + 1),
    innerStart: open.startIndex + 1,
    plannedKeys: decision.keys,
    outputs: found.filter((output) => chosen.has(output.key)),
    reservedRefs,
    indexed: [],
    toolRefs: [],
  };
  return { decision, plan };
}

/**
 * Each output's size and its stub's, by its result message: a step classifies every output of the
 * open chain, after every tool turn, and a message never changes (measuring them again made each
 * step, and a replay of a long open chain, grow with the square of the chain).
 */
const sizesOf = new WeakMap<object, { textTokens: number; tokens: number; stubTokens?: number }>();

/** The tokens an output of the open chain counts for (core/open-chain-policy.ts `estimateOutputTokens`), measured once. */
export function openOutputTokens(result: ToolResultMessage): number {
  return measured(result).tokens;
}

function measured(result: ToolResultMessage): { textTokens: number; tokens: number; stubTokens?: number } {
  let known = sizesOf.get(result);
  if (known === undefined) {
    const textTokens = estimateTokens(contentText(result.content));
    known = { textTokens, tokens: estimateOutputTokens("", result.content, textTokens) };
    sizesOf.set(result, known);
  }
  return known;
}

function outputSizes(output: SpanOutput): { tokens: number; stubTokens: number } {
  const known = measured(output.result);
  if (known.stubTokens === undefined) {
    // Its parts as if kept inline: the stub then names each image's pixel size too, so its estimate is never short.
    const parts: ArchivedPart[] = nonTextParts(output.result.content).map(({ at, part }) => ({ at, kind: "inline", part }));
    const text = contentText(output.result.content);
    const stub = archivedOutputStubText({ toolName: output.call.name, args: extractionArgs(output.call), resultText: text, ...(parts.length > 0 ? { parts } : {}) }, WIDEST_REF, undefined, known.textTokens);
    known.stubTokens = estimateTokens(stub);
  }
  return { tokens: known.tokens, stubTokens: known.stubTokens };
}

function classify(output: SpanOutput, state: PruneState, graceKeys: ReadonlySet<string>, protectedIds: ReadonlySet<string>): OpenOutput {
  const id = output.result.toolCallId;
  const base = { key: output.key, ...outputSizes(output) };
  if (protectedIds.has(id)) return { ...base, status: "protected" };
  if (state.recordForKey(output.key)) return { ...base, status: "archived" };
  if (graceKeys.has(output.key) || graceKeys.has(id)) return { ...base, status: "grace" };
  return { ...base, status: "archivable" };
}
