/**
 * Loops that run once per chain or per entry pause every ITEMS_PER_STEP items (core/steps.ts), or
 * more often where an item costs more, so a session of thousands of small chains does not hold a
 * shared thread for one long stretch; and a paused run gives the same answer as one run straight
 * through.
 */

import { describe, expect, it } from "vitest";
import { unknownEntryKinds, unknownEntryKindsSteps } from "../src/core/entry-kinds.js";
import { applyChainRanges, applyChainRangesSteps, CHAIN_MESSAGE_ITEMS, planChainRanges, planChainRangesSteps } from "../src/core/render/chain-ranges.js";
import { PruneState } from "../src/core/prune-state.js";
import type { ChainCompressionEntry, DiagnosticReport } from "../src/core/prune-types.js";
import type { SessionEntry } from "../src/core/session-types.js";
import { SpanIndex } from "../src/core/span-index.js";
import { ITEMS_PER_STEP, type Steps } from "../src/core/steps.js";
import { closedChain } from "./helpers/messages.js";

/** Runs the steps to the end, counting the pauses on the way. */
function pausesOf<T>(steps: Steps<T>): { value: T; pauses: number } {
  let pauses = 0;
  for (;;) {
    const next = steps.next();
    if (next.done) return { value: next.value, pauses };
    pauses++;
  }
}

const ITEMS = 5 * ITEMS_PER_STEP;

/** `count` one-call chains back to back, each with its chain entry. */
function smallChains(count: number): { messages: ReturnType<typeof closedChain>; entries: ChainCompressionEntry[] } {
  const messages = [];
  const entries: ChainCompressionEntry[] = [];
  for (let k = 0; k < count; k++) {
    const start = 10_000 + k * 100;
    const chain = closedChain(start, [{ id: `c${k}` }]);
    messages.push(...chain);
    const final = chain[chain.length - 1]!.timestamp as number;
    entries.push({ blockId: `b${k + 1}`, startUserTimestamp: start, finalAssistantTimestamp: final, droppedToolCallIds: [`c${k}`], toolRefs: [], compressedAt: 1, rangeSummaryText: "body" });
  }
  return { messages, entries };
}

describe("per-chain and per-entry loops pause", () => {
  it("planning chain ranges pauses every ITEMS_PER_STEP entries, with the plan of an unpaused run", () => {
    const { messages, entries } = smallChains(ITEMS);
    const spans = new SpanIndex(messages);
    const paused: DiagnosticReport[] = [];
    const { value, pauses } = pausesOf(planChainRangesSteps(spans, entries, paused));
    expect(pauses).toBeGreaterThanOrEqual(ITEMS / ITEMS_PER_STEP);
    expect(value).toHaveLength(ITEMS);
    const straight: DiagnosticReport[] = [];
    expect(value).toEqual(planChainRanges(spans, entries, straight));
    expect(paused).toEqual(straight);
  });

  it("building the chains' messages pauses every few chains (each counts as CHAIN_MESSAGE_ITEMS items), with the messages of an unpaused run", () => {
    const { messages, entries } = smallChains(ITEMS);
    const state = new PruneState();
    for (const entry of entries) state.registerChain(entry);
    const { value, pauses } = pausesOf(applyChainRangesSteps([...messages], state));
    // Every pause before the last chain's message: the loop over the ranges alone makes these.
    expect(pauses).toBeGreaterThanOrEqual((ITEMS * CHAIN_MESSAGE_ITEMS) / ITEMS_PER_STEP);
    // Each chain: its user message, its compressed message and its reply.
    expect(value.messages).toHaveLength(ITEMS * 3);
    expect(value).toEqual(applyChainRanges([...messages], state));
  });

  it("a span index built for thousands of boundaries pauses while it collects them", () => {
    const { entries } = smallChains(ITEMS);
    // No messages: every pause comes from the boundaries.
    const { value, pauses } = pausesOf(SpanIndex.steps([], entries));
    expect(pauses).toBeGreaterThanOrEqual(ITEMS / ITEMS_PER_STEP);
    expect(value.resolve(entries[0]!)).toBeNull();
  });

  it("looking for unknown entry kinds pauses every ITEMS_PER_STEP entries", () => {
    const entries = Array.from({ length: ITEMS }, (_, k) => ({ type: k === 7 ? "future_kind" : "label", id: `e${k}`, parentId: null, timestamp: "" }) as unknown as SessionEntry);
    const { value, pauses } = pausesOf(unknownEntryKindsSteps(entries));
    expect(pauses).toBeGreaterThanOrEqual(ITEMS / ITEMS_PER_STEP);
    expect(value).toEqual(unknownEntryKinds(entries));
    expect(value).toEqual([{ type: "future_kind", count: 1, firstIndex: 7 }]);
  });
});
