/**
 * The synthetic `<compressed-chain>` user message that stands for a compressed chain in the
 * rendered context (core/render/chain-ranges.ts places it): its body, the envelope around it, the
 * protected outputs it carries and the chain's archive map.
 */

import type { MapCall } from "../archive-map.js";
import { holdsImages } from "../archived-parts.js";
import { occurrenceKey } from "../occurrence-key.js";
import type { PruneState } from "../prune-state.js";
import type { ChainCompressionEntry } from "../prune-types.js";
import type { AgentMessage, ContentPart, UserMessage } from "../session-types.js";
import { stepDue, type Steps } from "../steps.js";

/** A protected output relocated verbatim into the synthetic message. */
export interface ProtectedOutput {
  tool: string;
  text: string;
}

const SYNTHETIC_PREFIX = '<compressed-chain id="';

/** Body before placeholder substitution: the stored text, else the per-batch summaries joined. */
export function rawChainBody(entry: ChainCompressionEntry, state: PruneState): string {
  if (entry.rangeSummaryText !== undefined) return entry.rangeSummaryText;
  return state.summaryTextsFor(entry.droppedOccurrenceKeys ?? entry.droppedToolCallIds ?? []).join("\n\n");
}

const BLOCK_PLACEHOLDER = /\{(b\d+)\}/g;

/**
 * One-level `{bN}` substitution, for covered-path bodies only. Summaries written by the model
 * may refer to earlier blocks, and upstream expands those. Deterministic bodies are NOT
 * expanded (deliberate divergence from upstream, reference §13.1): their First/Last lines
 * quote raw tool args, where `{b1}` is ordinary shell or template text and expanding it would
 * splice another block's body into an args excerpt.
 */
export function chainBody(entry: ChainCompressionEntry, state: PruneState, bodyOfBlock: (blockId: string) => string): string {
  const body = rawChainBody(entry, state);
  if (entry.bodySource === "deterministic" || !body.includes("{b")) return body;
  return body.replace(BLOCK_PLACEHOLDER, (literal, blockId: string) => {
    if (blockId === entry.blockId) return literal;
    return bodyOfBlock(blockId) || literal;
  });
}

/** Raw bodies of all registered blocks by id, computed on first use only. */
export function blockBodyLookup(state: PruneState): (blockId: string) => string {
  let byId: Map<string, ChainCompressionEntry> | undefined;
  return (blockId) => {
    byId ??= new Map([...state.chains.values()].map((entry) => [entry.blockId, entry]));
    const entry = byId.get(blockId);
    return entry ? rawChainBody(entry, state) : "";
  };
}

/**
 * The synthetic user message; values are not escaped, as upstream does not escape them. `map`, the
 * chain's archive map, follows the body (render only: the stored body stays upstream's).
 */
export function buildSyntheticChainMessage(entry: ChainCompressionEntry, body: string, protectedOutputs: readonly ProtectedOutput[], map = ""): UserMessage {
  const blocks = protectedOutputs.map((p) => `\n\n<protected-output tool="${p.tool}">\n${p.text}\n</protected-output>`).join("");
  const mapped = map === "" ? body : `${body}\n\n${map}`;
  const text = `${SYNTHETIC_PREFIX}${entry.blockId}" tools="${(entry.toolRefs ?? []).join(",")}">\n${mapped}${blocks}\n</compressed-chain>`;
  return { role: "user", content: [{ type: "text", text }], timestamp: entry.compressedAt };
}

/**
 * The chain's archived calls in ref order, as the map reads them; refs without a record are left
 * out. An output holds images for the map unless a context edit changed it (`edited`, keyed as
 * core/context-edits.ts editedOutputs): the edit hides its parts too.
 */
export function mapCallsOf(entry: ChainCompressionEntry, state: PruneState, edited?: ReadonlyMap<string, unknown>): MapCall[] {
  const calls: MapCall[] = [];
  for (const ref of entry.toolRefs ?? []) {
    const record = recordOfRef(ref, state);
    if (!record) continue;
    const call: MapCall = { ref, toolName: record.toolName, args: record.args, failed: record.isError === true };
    if (holdsImages(record.parts) && edited?.has(occurrenceKey(record.toolCallId, record.resultTimestamp)) !== true) call.images = true;
    calls.push(call);
  }
  return calls;
}

/** How many calls mapCallsOf gives, without making them. */
export function mapCallCount(entry: ChainCompressionEntry, state: PruneState): number {
  let count = 0;
  for (const ref of entry.toolRefs ?? []) if (recordOfRef(ref, state)) count++;
  return count;
}

function recordOfRef(ref: string, state: PruneState) {
  const key = state.keyByRef.get(ref);
  return key === undefined ? undefined : state.recordForKey(key);
}

/** Block ids of synthetic messages already in the input, so a re-render does not insert twice. */
export function* presentSyntheticIds(messages: readonly AgentMessage[]): Steps<Set<string>> {
  const ids = new Set<string>();
  for (let index = 0; index < messages.length; index++) {
    if (stepDue(index)) yield;
    const message = messages[index]!;
    if (message.role !== "user") continue;
    const text = firstText((message as UserMessage).content);
    if (!text?.startsWith(SYNTHETIC_PREFIX)) continue;
    const end = text.indexOf('"', SYNTHETIC_PREFIX.length);
    if (end > 0) ids.add(text.slice(SYNTHETIC_PREFIX.length, end));
  }
  return ids;
}

function firstText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const part = content.find((p: ContentPart) => p?.type === "text") as { text?: unknown } | undefined;
  return typeof part?.text === "string" ? part.text : undefined;
}
