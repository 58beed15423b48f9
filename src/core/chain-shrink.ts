/**
 * Whether compressing a closed chain shrinks the context (issue 47): the `<compressed-chain>`
 * message the render would insert (body, the largest map the chain could get, protected outputs)
 * against what the render would drop for it (the span's model turns, tool results and per-batch
 * summaries, and the closing reply's thinking), both in billed characters (core/billed-size.ts).
 * A chain that does not shrink is left as it is. Pure; works on lightened messages too.
 *
 * What is dropped is the span as it was before any of it was archived, whatever an earlier
 * attempt archived already (a stranded chain, an open chain's steps): the decision depends on the
 * chain alone, so a run healed after a crash decides as an uninterrupted one did. The inserted
 * side leans towards "does not shrink": an argument excerpt the scan lightened counts as the
 * longest the body could print, and the map gets the chain's whole per-chain budget.
 */

import { chainMapText, type MapCall } from "./archive-map.js";
import { imageBillOf } from "./billed-size.js";
import { argsExcerpt, buildDeterministicBody, EXCERPT_MAX_UNITS, type BodyRecord } from "./deterministic-body.js";
import { jsonText } from "./json-text.js";
import { placeholderChars, realJsonLength } from "./light-placeholder.js";
import { contentText } from "./message-text.js";
import type { ChainCompressionEntry } from "./prune-types.js";
import { buildSyntheticChainMessage, type ProtectedOutput } from "./render/chain-message.js";
import { droppedInsideSpan, withoutThinking } from "./render/chain-ranges.js";
import type { AgentMessage, ToolResultMessage } from "./session-types.js";

export interface ChainShrinkInput {
  /** Messages strictly inside the span, as the planner has them. */
  inner: readonly AgentMessage[];
  /** The closing reply, whose thinking the render strips (undefined: none, or not stripped). */
  strippedFinal?: AgentMessage;
  /** The chain's records as its body will list them, and the refs it will carry. */
  records: readonly BodyRecord[];
  toolRefs: readonly string[];
  blockId: string;
  /** The calls its map will show, in ref order, and the per-chain map budget (undefined: no map). */
  mapCalls: readonly MapCall[];
  mapPerChain?: number;
  protectedToolCallIds: ReadonlySet<string>;
}

export interface ChainShrink {
  /** Billed characters the render would drop for the chain. */
  dropped: number;
  /** Billed characters of the message it would insert. */
  inserted: number;
}

/** A time as wide as any the chain entry's `compressedAt` will hold (13 digits until the year 2286). */
const WIDEST_TIME = 9_999_999_999_999;

/**
 * dropped and inserted for one chain; it shrinks when inserted < dropped. With `enough`, the
 * count of dropped stops once it passes the inserted size (the planner's question needs no more,
 * and a large chain's first output usually answers it): `dropped` is then a lower bound.
 */
export function chainShrink(input: ChainShrinkInput, enough = false): ChainShrink {
  const protectedOutputs: ProtectedOutput[] = [];
  for (const message of input.inner) {
    const result = message as ToolResultMessage;
    if (message.role === "toolResult" && input.protectedToolCallIds.has(result.toolCallId)) protectedOutputs.push({ tool: result.toolName, text: contentText(result.content) });
  }
  const body = buildDeterministicBody(input.records, input.toolRefs, excerptBound);
  const map = input.mapPerChain === undefined ? "" : chainMapText(input.mapCalls, input.mapPerChain);
  const entry = { blockId: input.blockId, toolRefs: [...input.toolRefs], compressedAt: WIDEST_TIME } as ChainCompressionEntry;
  const inserted = billedChars(buildSyntheticChainMessage(entry, body, protectedOutputs, map));
  let dropped = 0;
  for (const message of input.inner) {
    if (droppedInsideSpan(message)) dropped += billedChars(message);
    if (enough && dropped > inserted) return { dropped, inserted };
  }
  if (input.strippedFinal) dropped += billedChars(input.strippedFinal) - billedChars(withoutThinking(input.strippedFinal));
  return { dropped, inserted };
}

/** True when the chain's compressed form is shorter than what it replaces. */
export function shrinks(shrink: ChainShrink): boolean {
  return shrink.inserted < shrink.dropped;
}

/** The skip cause of a chain that does not shrink: one text for all, so a notice that lists causes names it once. */
export const WOULD_GROW_CAUSE = "would-grow: its compressed form is not shorter than what it replaces";

/** A message's size in the context as billed (the measure main/context-size.ts sums). */
export function billedChars(message: unknown): number {
  return realJsonLength(message) + imageBillOf(message).delta;
}

/**
 * The body's excerpt of a call's args; one the scan lightened is not known here, so it counts as
 * the longest excerpt there is, every character escaped in the message's JSON.
 */
function excerptBound(args: unknown): string {
  const json = args === undefined ? undefined : jsonText(args);
  if (json === undefined || placeholderChars(json) === 0) return argsExcerpt(args);
  return '"'.repeat(EXCERPT_MAX_UNITS + 3);
}
