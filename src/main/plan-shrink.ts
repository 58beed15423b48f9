/**
 * The planner's question to core/chain-shrink.ts, asked before any ref or block id is reserved:
 * would this chain, compressed with the refs it would get, shrink the rendered context? The
 * render options that decide the inserted message's size (the map's per-chain budget, whether the
 * closing reply loses its thinking) are the ones the context will be rendered with.
 */

import { DEFAULT_ARCHIVE_MAP, mapBudgetOf, type MapBudget, type MapCall } from "../core/archive-map.js";
import { holdsImages } from "../core/archived-parts.js";
import { imageBillOf } from "../core/billed-size.js";
import { chainShrink, type ChainShrink } from "../core/chain-shrink.js";
import type { BodyRecord } from "../core/deterministic-body.js";
import type { SpanOutput } from "../core/extract-records.js";
import { extractionArgs } from "../core/message-text.js";
import type { PruneState } from "../core/prune-state.js";
import type { ChainRange } from "../core/prune-types.js";
import type { AgentMessage } from "../core/session-types.js";

/** The render settings the check reads; absent ones are the render's defaults. */
export interface ShrinkRender {
  map?: MapBudget | false;
  stripFinalAssistantThinking?: boolean;
}

export interface ShrinkQuestion {
  chain: ChainRange;
  messages: readonly AgentMessage[];
  span: { startIndex: number; endIndex: number };
  outputs: readonly SpanOutput[];
  indexed: readonly BodyRecord[];
  lookupKeys: readonly string[];
  state: PruneState;
  render: ShrinkRender;
}

/** The chain's figures, `dropped` counted only as far as the answer needs (core/chain-shrink.ts `enough`). */
export function planShrink(q: ShrinkQuestion): ChainShrink {
  const { state } = q;
  const refs = state.peekRefs(q.outputs.length);
  const fresh = new Map(q.outputs.map((output, i) => [output.key, { output, ref: refs[i]! }]));
  const toolRefs = q.lookupKeys.flatMap((key) => fresh.get(key)?.ref ?? state.refByKey.get(key) ?? []);
  const byRef = new Map([...fresh.values()].map((f) => [f.ref, f.output]));
  const map = q.render.map === false ? undefined : (q.render.map ?? mapBudgetOf(DEFAULT_ARCHIVE_MAP));
  const records = [...q.indexed, ...q.outputs.map(recordOf)];
  const final = q.render.stripFinalAssistantThinking === false ? undefined : q.messages[q.span.endIndex];
  return chainShrink({
    inner: q.messages.slice(q.span.startIndex + 1, q.span.endIndex),
    ...(final ? { strippedFinal: final } : {}),
    records,
    toolRefs,
    blockId: state.peekBlockId(),
    mapCalls: map === undefined ? [] : toolRefs.flatMap((ref) => mapCallOf(ref, byRef.get(ref), state)),
    ...(map ? { mapPerChain: map.perChain } : {}),
    protectedToolCallIds: new Set(q.chain.protectedToolCallIds),
  }, true);
}

function recordOf(output: SpanOutput): BodyRecord {
  const at = output.result.timestamp;
  return { toolCallId: output.result.toolCallId, toolName: output.call.name, args: extractionArgs(output.call), timestamp: at, resultTimestamp: at };
}

/** The map's line for a ref, as mapCallsOf (core/render/chain-message.ts) will make it. */
function mapCallOf(ref: string, output: SpanOutput | undefined, state: PruneState): MapCall[] {
  if (output) {
    const call: MapCall = { ref, toolName: output.call.name, args: extractionArgs(output.call), failed: output.result.isError === true };
    if (imageBillOf(output.result).tally.count > 0) call.images = true;
    return [call];
  }
  const key = state.keyByRef.get(ref);
  const record = key === undefined ? undefined : state.recordForKey(key);
  if (!record) return [];
  const call: MapCall = { ref, toolName: record.toolName, args: record.args, failed: record.isError === true };
  if (holdsImages(record.parts)) call.images = true;
  return [call];
}
