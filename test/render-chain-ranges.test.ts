import { describe, expect, it } from "vitest";
import { assistantCalls, toolResult, user } from "./helpers/messages.js";
import { buildChainEntry } from "../src/core/chain-entry.js";
import { detectChains } from "../src/core/detect-chains.js";
import { PruneState } from "../src/core/prune-state.js";
import type { ChainCompressionEntry, DiagnosticReport } from "../src/core/prune-types.js";
import { applyChainRanges, planChainRanges } from "../src/core/render/chain-ranges.js";
import type { AgentMessage, AssistantMessage, CustomMessage, ToolResultMessage, UserMessage } from "../src/core/session-types.js";
import { SpanIndex } from "../src/core/span-index.js";

// --- local factories -------------------------------------------------------------------------
const assistantText = (text: string, ts: number, thinking?: string): AssistantMessage => ({
  role: "assistant",
  content: [...(thinking === undefined ? [] : [{ type: "thinking", thinking }]), { type: "text", text }],
  timestamp: ts,
});
const summaryMessage = (refs: Array<{ shortId: string; toolCallId: string; resultTimestamp?: number }>, ts: number): CustomMessage => ({
  role: "custom",
  customType: "context-prune-summary",
  content: "summary",
  display: false,
  details: { toolCallRefs: refs, toolNames: [], turnIndex: 0, timestamp: ts },
  timestamp: ts,
});

/** Entry for the only closed chain of `messages`, as the compressor would build it. */
function entryFor(messages: AgentMessage[], blockId: string, extra: { text?: string; deterministic?: boolean; isProtected?: (name: string) => boolean } = {}): ChainCompressionEntry {
  const chain = detectChains(messages, extra.isProtected ? (name) => extra.isProtected!(name) : undefined)[0]!;
  return buildChainEntry({
    chain,
    blockId,
    toolRefs: chain.middleOccurrenceKeys.map((_, i) => `t${i + 1}`),
    compressedAt: 90_000 + Number(blockId.slice(1)),
    ...(extra.text === undefined ? {} : { rangeSummaryText: extra.text }),
    deterministic: extra.deterministic ?? false,
  });
}

/** Entry written by hand, for spans the detector would never produce. */
const manualEntry = (blockId: string, start: number, final: number | null, dropped: string[]): ChainCompressionEntry => ({
  blockId,
  startUserTimestamp: start,
  droppedToolCallIds: dropped,
  finalAssistantTimestamp: final,
  toolRefs: [],
  compressedAt: 90_000,
  rangeSummaryText: `body of ${blockId}`,
});

/** u(1000) → read c1 → bash c2 → final(1050, with thinking) → u(2000) → text(2010). */
function oneChain(): AgentMessage[] {
  return [
    user("start", 1000),
    assistantCalls([{ id: "c1", name: "read", args: { path: "a.txt" } }], 1010),
    toolResult("c1", "read", "A", 1020),
    assistantCalls([{ id: "c2", name: "bash" }], 1030),
    toolResult("c2", "bash", "B", 1040),
    assistantText("done", 1050, "secret reasoning"),
    user("next", 2000),
    assistantText("ok", 2010),
  ];
}

const stripOn = { stripFinalAssistantThinking: true };
const textOf = (message: AgentMessage | undefined): string => ((message as UserMessage).content as Array<{ text: string }>)[0]!.text;

describe("phase 3: synthetic message", () => {
  it("replaces the span with one synthetic user message built from the per-batch summaries", () => {
    const messages = oneChain();
    const state = new PruneState();
    state.registerSummaryText(["c1@1020"], "Summary A");
    state.registerSummaryText(["c2@1040", "c1@1020"], "Summary B");
    state.registerChain(entryFor(messages, "b1"));
    const { messages: out, diagnostics } = applyChainRanges(messages, state, stripOn);
    expect(diagnostics).toEqual([]);
    expect(out.map((m) => m.role)).toEqual(["user", "user", "assistant", "user", "assistant"]);
    expect(out[1]).toEqual({
      role: "user",
      content: [{ type: "text", text: '<compressed-chain id="b1" tools="t1,t2">\nSummary A\n\nSummary B\n</compressed-chain>' }],
      timestamp: 90_001,
    });
    expect(out[0]).toBe(messages[0]);
    expect(out[3]).toBe(messages[6]);
  });

  it("prefers rangeSummaryText over the per-batch summaries", () => {
    const messages = oneChain();
    const state = new PruneState();
    state.registerSummaryText(["c1@1020"], "Summary A");
    state.registerChain(entryFor(messages, "b1", { text: "Fused." }));
    expect(textOf(applyChainRanges(messages, state, stripOn).messages[1])).toBe('<compressed-chain id="b1" tools="t1,t2">\nFused.\n</compressed-chain>');
  });

  it("strips thinking from the closing assistant only when asked", () => {
    const messages = oneChain();
    const state = new PruneState();
    state.registerChain(entryFor(messages, "b1", { text: "x" }));
    const stripped = applyChainRanges(messages, state, stripOn).messages[2] as AssistantMessage;
    expect(stripped.content).toEqual([{ type: "text", text: "done" }]);
    expect((messages[5] as AssistantMessage).content).toHaveLength(2); // input untouched
    expect(applyChainRanges(messages, state, { stripFinalAssistantThinking: false }).messages[2]).toBe(messages[5]);
  });

  it("relocates protected outputs verbatim, in span order, after the body", () => {
    const messages: AgentMessage[] = [
      user("start", 1000),
      assistantCalls([{ id: "p1", name: "todowrite" }, { id: "c1", name: "read" }], 1010),
      toolResult("p1", "todowrite", "- [ ] one\n- [x] two", 1020),
      toolResult("c1", "read", "plain", 1021),
      assistantCalls([{ id: "p2", name: "todowrite" }], 1030),
      toolResult("p2", "todowrite", "<b>raw & unescaped</b>", 1040),
      assistantText("done", 1050),
    ];
    const entry = entryFor(messages, "b1", { text: "Body.", deterministic: true, isProtected: (name) => name === "todowrite" });
    expect(entry.protectedToolCallIds).toEqual(["p1", "p2"]);
    const state = new PruneState();
    state.registerChain(entry);
    expect(textOf(applyChainRanges(messages, state, stripOn).messages[1])).toBe(
      '<compressed-chain id="b1" tools="t1,t2,t3">\nBody.' +
        '\n\n<protected-output tool="todowrite">\n- [ ] one\n- [x] two\n</protected-output>' +
        '\n\n<protected-output tool="todowrite">\n<b>raw & unescaped</b>\n</protected-output>' +
        "\n</compressed-chain>",
    );
  });
});

describe("phase 3: {bN} placeholders", () => {
  /** Three chains back to back; start timestamps 1000, 2000, 3000. */
  function threeChains(): AgentMessage[] {
    const chain = (base: number, id: string): AgentMessage[] => [
      user(`u${base}`, base),
      assistantCalls([{ id, name: "bash" }], base + 10),
      toolResult(id, "bash", "out", base + 20),
      assistantText("done", base + 30),
    ];
    return [...chain(1000, "c1"), ...chain(2000, "c2"), ...chain(3000, "c3")];
  }

  it("expands {bN} in covered bodies one level, but never in deterministic bodies", () => {
    const messages = threeChains();
    const state = new PruneState();
    state.registerChain(entryFor(messages.slice(0, 4), "b1", { text: "Alpha {b2}" }));
    state.registerChain(entryFor(messages.slice(4, 8), "b2", { text: "See {b1}, {b9} and {b2}." }));
    const deterministic = 'Deterministic chain compression (...)\nFirst: bash {"command":"echo {b1}"}';
    state.registerChain(entryFor(messages.slice(8), "b3", { text: deterministic, deterministic: true }));
    const out = applyChainRanges(messages, state, stripOn).messages;
    const bodies = out.filter((m) => m.role === "user" && textOf(m).startsWith("<compressed-chain")).map(textOf);
    expect(bodies).toHaveLength(3);
    // Covered: b1 expands to its raw body (no second level), unknown b9 and own b2 stay literal.
    expect(bodies[1]).toBe('<compressed-chain id="b2" tools="t1">\nSee Alpha {b2}, {b9} and {b2}.\n</compressed-chain>');
    // Deterministic: the args excerpt keeps its literal {b1} (deliberate divergence from upstream §13.1).
    expect(bodies[2]).toBe(`<compressed-chain id="b3" tools="t1">\n${deterministic}\n</compressed-chain>`);
  });

  it("leaves a placeholder literal when the named block has an empty body", () => {
    const messages = threeChains().slice(0, 8);
    const state = new PruneState();
    state.registerChain(entryFor(messages.slice(0, 4), "b1")); // no summaries, no text → ""
    state.registerChain(entryFor(messages.slice(4), "b2", { text: "ref {b1}" }));
    const synthetic = applyChainRanges(messages, state, stripOn).messages.find((m) => m.role === "user" && textOf(m).includes('id="b2"'));
    expect(textOf(synthetic)).toContain("\nref {b1}\n");
  });
});

describe("phase 3: entries that cannot be applied", () => {
  it("an unresolvable entry drops nothing and reports unresolved-range keyed by blockId", () => {
    const messages = oneChain();
    const state = new PruneState();
    state.registerChain(manualEntry("b1", 1000, 9999, ["c1", "c2"]));
    const result = applyChainRanges(messages, state, stripOn);
    expect(result.messages).toBe(messages);
    expect(result.diagnostics).toEqual([{ kind: "unresolved-range", detail: "blockId=b1 start=1000 final=9999", dedupKey: "b1" }]);
  });

  it("a duplicated start timestamp makes the entry unresolvable", () => {
    const messages = [...oneChain(), user("same ts", 1000)];
    const state = new PruneState();
    state.registerChain(manualEntry("b1", 1000, 1050, ["c1", "c2"]));
    const result = applyChainRanges(messages, state, stripOn);
    expect(result.messages).toBe(messages);
    expect(result.diagnostics.map((d) => d.dedupKey)).toEqual(["b1"]);
  });

  it("skips an entry nested inside another with an overlap: key", () => {
    const messages: AgentMessage[] = [
      user("outer", 1000),
      assistantCalls([{ id: "c1", name: "bash" }], 1010),
      toolResult("c1", "bash", "x", 1020),
      user("inner", 1030),
      assistantCalls([{ id: "c2", name: "bash" }], 1040),
      toolResult("c2", "bash", "y", 1050),
      assistantText("inner done", 1060),
      assistantText("outer done", 1070),
    ];
    const state = new PruneState();
    state.registerChain(manualEntry("b2", 1030, 1060, ["c2"])); // registered first: order must not matter
    state.registerChain(manualEntry("b1", 1000, 1070, ["c1", "c2"]));
    const result = applyChainRanges(messages, state, stripOn);
    expect(result.diagnostics).toEqual([
      { kind: "unresolved-range", detail: "blockId=b2 skipped: range nests inside blockId=b1", dedupKey: "overlap:b2" },
    ]);
    // The outer range applies; the inner user message survives inside it; one synthetic only.
    expect(result.messages.map((m) => (m.role === "user" ? textOf(m).slice(0, 25) : m.role))).toEqual([
      "outer",
      '<compressed-chain id="b1"',
      "inner",
      "assistant",
    ]);
  });

  it("skips a second entry claiming the same start index", () => {
    const messages = oneChain();
    const diagnostics: DiagnosticReport[] = [];
    const accepted = planChainRanges(new SpanIndex(messages), [manualEntry("b1", 1000, 1050, []), manualEntry("b2", 1000, 1050, [])], diagnostics);
    expect(accepted.map((r) => r.entry.blockId)).toEqual(["b1"]);
    expect(diagnostics).toEqual([
      { kind: "unresolved-range", detail: "blockId=b2 skipped: range duplicates startIndex=0 already claimed", dedupKey: "overlap:b2" },
    ]);
  });

  it("reports range-id-mismatch when the span's ids differ from the recorded ones, and still applies", () => {
    const messages = oneChain();
    const state = new PruneState();
    state.registerChain(manualEntry("b1", 1000, 1050, ["c1", "c2", "gone@77"]));
    const result = applyChainRanges(messages, state, stripOn);
    expect(result.diagnostics).toEqual([{ kind: "range-id-mismatch", detail: "blockId=b1 recorded=3 actual=2", dedupKey: "b1" }]);
    expect(result.messages).toHaveLength(5);
  });

  it("compares ids as sets: a list naming one id twice (two keys of it) matches, one naming a stranger in place of an id does not", () => {
    const twice = new PruneState();
    twice.registerChain(manualEntry("b1", 1000, 1050, ["c1", "c1@1010", "c2"]));
    expect(applyChainRanges(oneChain(), twice, stripOn).diagnostics).toEqual([]);
    const stranger = new PruneState();
    stranger.registerChain(manualEntry("b1", 1000, 1050, ["c1", "gone"]));
    expect(applyChainRanges(oneChain(), stranger, stripOn).diagnostics).toEqual([{ kind: "range-id-mismatch", detail: "blockId=b1 recorded=2 actual=2", dedupKey: "b1" }]);
    const swapped = new PruneState();
    swapped.registerChain(manualEntry("b1", 1000, 1050, ["c2", "c1"]));
    expect(applyChainRanges(oneChain(), swapped, stripOn).diagnostics).toEqual([]);
  });

  it("without the id check, renders the same messages and reports no mismatch", () => {
    const state = new PruneState();
    state.registerChain(manualEntry("b1", 1000, 1050, ["c1", "c2", "gone@77"]));
    const checked = applyChainRanges(oneChain(), state, stripOn);
    const unchecked = applyChainRanges(oneChain(), state, { ...stripOn, checkRecordedIds: false });
    expect(unchecked.diagnostics).toEqual([]);
    expect(unchecked.messages).toEqual(checked.messages);
  });
});

describe("phase 3: what survives", () => {
  it("keeps a later live turn that reuses a dropped tool-call id, and its summary", () => {
    const messages: AgentMessage[] = [
      ...oneChain(),
      assistantCalls([{ id: "c1", name: "read" }], 2020),
      toolResult("c1", "read", "live", 2030),
      summaryMessage([{ shortId: "t7", toolCallId: "c1", resultTimestamp: 2030 }], 2031),
      summaryMessage([{ shortId: "t1", toolCallId: "c1", resultTimestamp: 1020 }], 2032),
      assistantText("fine", 2040),
    ];
    const state = new PruneState();
    state.registerChain(entryFor(messages, "b1", { text: "x" }));
    const out = applyChainRanges(messages, state, stripOn).messages;
    expect(out).toContain(messages[8]);
    expect(out).toContain(messages[9]);
    expect(out).toContain(messages[10]); // summary of the live occurrence
    expect(out).not.toContain(messages[11]); // summary of the dropped occurrence, after the range
    expect(out.filter((m) => m.role === "toolResult")).toEqual([messages[9]]);
  });

  it("keeps user, third-party custom and bashExecution messages inside the span, drops per-batch summaries", () => {
    const thirdParty: CustomMessage = { role: "custom", customType: "other-extension", content: "keep me", timestamp: 1031 };
    const bash: AgentMessage = { role: "bashExecution", command: "ls", output: "", exitCode: 0, timestamp: 1032 };
    const messages = oneChain();
    messages.splice(3, 0, thirdParty, bash, summaryMessage([{ shortId: "t1", toolCallId: "c1", resultTimestamp: 1020 }], 1033));
    const state = new PruneState();
    state.registerChain(manualEntry("b1", 1000, 1050, ["c1", "c2"]));
    const out = applyChainRanges(messages, state, stripOn).messages;
    expect(out.slice(0, 5).map((m) => m.role)).toEqual(["user", "user", "custom", "bashExecution", "assistant"]);
    expect(out[2]).toBe(thirdParty);
    expect(out[3]).toBe(bash);
  });

  it("removes per-batch summaries anywhere whose refs hit a dropped key or, for legacy refs, a dropped bare id", () => {
    const legacySummary: CustomMessage = {
      role: "custom",
      customType: "context-prune-summary",
      content: "legacy",
      details: { toolCallIds: ["c2"] },
      timestamp: 1,
    };
    const unrelated = summaryMessage([{ shortId: "t5", toolCallId: "zz", resultTimestamp: 5 }], 3);
    const messages: AgentMessage[] = [legacySummary, unrelated, ...oneChain(), summaryMessage([{ shortId: "t2", toolCallId: "c2", resultTimestamp: 1040 }], 2050)];
    const state = new PruneState();
    state.registerChain(manualEntry("b1", 1000, 1050, ["c1", "c2"]));
    const out = applyChainRanges(messages, state, stripOn).messages;
    expect(out).not.toContain(legacySummary);
    expect(out).not.toContain(messages[10]);
    expect(out).toContain(unrelated);
  });
});

describe("phase 3: identity", () => {
  it("returns the input array when no chain is registered", () => {
    const messages = oneChain();
    expect(applyChainRanges(messages, new PruneState(), stripOn).messages).toBe(messages);
  });

  it("is idempotent: re-applying inserts nothing, reports nothing and returns the same array", () => {
    const messages = oneChain();
    const state = new PruneState();
    state.registerChain(entryFor(messages, "b1", { text: "x" }));
    const first = applyChainRanges(messages, state, stripOn);
    const second = applyChainRanges(first.messages, state, stripOn);
    expect(second.messages).toBe(first.messages);
    expect(second.diagnostics).toEqual([]);
  });
});
