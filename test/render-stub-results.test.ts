import { describe, expect, it } from "vitest";
import { assistantCalls, toolResult, user } from "./helpers/messages.js";
import { makeProtectionPredicate } from "../src/core/protection.js";
import { PruneState } from "../src/core/prune-state.js";
import type { ToolCallRecord } from "../src/core/prune-types.js";
import { stubArchivedResults, type StubOptions } from "../src/core/render/stub-results.js";
import type { AgentMessage, AssistantMessage, ToolResultMessage, UserMessage } from "../src/core/session-types.js";

// --- local factories -------------------------------------------------------------------------
const record = (id: string, name: string, text: string, resultTimestamp?: number, extra: Partial<ToolCallRecord> = {}): ToolCallRecord => ({
  toolCallId: id,
  toolName: name,
  args: {},
  resultText: text,
  isError: false,
  turnIndex: 1,
  timestamp: resultTimestamp ?? 1,
  ...(resultTimestamp === undefined ? {} : { resultTimestamp }),
  ...extra,
});

const noProtection: StubOptions = { isProtected: () => false, graceKeys: new Set() };
const textOf = (message: AgentMessage | undefined): string => ((message as ToolResultMessage).content as Array<{ text: string }>)[0]!.text;

describe("phase 1: stub text", () => {
  it("replaces an archived result by the exact normal stub and drops other fields", () => {
    const state = new PruneState();
    state.indexRecord(record("c1", "read", "big output", 1020), { seedDedup: true });
    state.registerRef({ shortId: "t4", toolCallId: "c1", resultTimestamp: 1020 });
    const original = { ...toolResult("c1", "read", "big output", 1020), isError: true, details: { x: 1 } };
    const out = stubArchivedResults([user("go", 1000), assistantCalls([{ id: "c1", name: "read" }], 1010), original], state, noProtection);
    expect(out[2]).toEqual({
      role: "toolResult",
      toolCallId: "c1",
      toolName: "read",
      content: [{ type: "text", text: "[Summarized in pruner summary, ref `t4`. Use context_tree_query to retrieve full output.]" }],
      isError: false,
      timestamp: 1020,
    });
    expect(Object.keys(out[2]!)).toEqual(["role", "toolCallId", "toolName", "content", "isError", "timestamp"]);
  });

  it("falls back to the bare id when the occurrence has no short ref", () => {
    const state = new PruneState();
    state.indexRecord(record("call_7", "bash", "x", 50), { seedDedup: false });
    const out = stubArchivedResults([toolResult("call_7", "bash", "x", 50)], state, noProtection);
    expect(textOf(out[0])).toBe("[Summarized in pruner summary, ref `call_7`. Use context_tree_query to retrieve full output.]");
  });

  it("uses the spilled stub with EM DASHes, byte count, preview and path", () => {
    const state = new PruneState();
    const spilled = record("c2", "bash", "", 2000, { spillBytes: 70000, resultPreview: "line 1\nline 2", spillPath: "/s/sess-blobs/c2_2000.txt" });
    state.indexRecord(spilled, { seedDedup: true });
    state.registerRef({ shortId: "t9", toolCallId: "c2", resultTimestamp: 2000 });
    const out = stubArchivedResults([toolResult("c2", "bash", "x".repeat(70000), 2000)], state, noProtection);
    expect(textOf(out[0])).toBe(
      "[Oversized output spilled to file — 70000 bytes.]\n" +
        "Tool: bash\n" +
        "Preview (head):\n" +
        "line 1\nline 2\n" +
        "Full output — read this file (offset/limit supported): /s/sess-blobs/c2_2000.txt\n" +
        "Or use context_tree_query with ref `t9`.",
    );
    expect(textOf(out[0])).toContain("\u2014");
  });

  it("prints ? bytes and an empty preview when the spilled record lacks them", () => {
    const state = new PruneState();
    state.indexRecord(record("c2", "bash", "", 2000, { spillPath: "/p.txt" }), { seedDedup: true });
    const text = textOf(stubArchivedResults([toolResult("c2", "bash", "x", 2000)], state, noProtection)[0]);
    expect(text.split("\n").slice(0, 4)).toEqual(["[Oversized output spilled to file — ? bytes.]", "Tool: bash", "Preview (head):", ""]);
  });
});

describe("phase 1: which results are stubbed", () => {
  it("keys by occurrence: a reused id with another timestamp stays live", () => {
    const state = new PruneState();
    state.indexRecord(record("c1", "read", "old", 1020), { seedDedup: true });
    const live = toolResult("c1", "read", "new", 3020);
    const out = stubArchivedResults([toolResult("c1", "read", "old", 1020), live], state, noProtection);
    expect(textOf(out[0])).toContain("Summarized in pruner summary");
    expect(out[1]).toBe(live);
  });

  it("stubs a dedup alias with the ref it inherited from its original", () => {
    const state = new PruneState();
    state.indexRecord(record("c1", "read", "same", 1020), { seedDedup: true });
    state.registerRef({ shortId: "t1", toolCallId: "c1", resultTimestamp: 1020 });
    state.registerDedupAlias("c8@5000", "c1@1020");
    const out = stubArchivedResults([toolResult("c8", "read", "same", 5000)], state, noProtection);
    expect(textOf(out[0])).toBe("[Summarized in pruner summary, ref `t1`. Use context_tree_query to retrieve full output.]");
  });

  it("uses a legacy bare-id record only when the id has no other occurrence", () => {
    const legacyOnly = new PruneState();
    legacyOnly.indexRecord(record("old1", "read", "legacy"), { seedDedup: true });
    legacyOnly.registerRef({ shortId: "t2", toolCallId: "old1" });
    const stubbed = stubArchivedResults([toolResult("old1", "read", "legacy", 700)], legacyOnly, noProtection);
    expect(textOf(stubbed[0])).toContain("ref `t2`");

    const mixed = new PruneState();
    mixed.indexRecord(record("old1", "read", "legacy"), { seedDedup: true });
    mixed.indexRecord(record("old1", "read", "modern", 900), { seedDedup: true });
    const live = toolResult("old1", "read", "live", 700);
    expect(stubArchivedResults([live], mixed, noProtection)[0]).toBe(live);
  });

  it("re-checks protection at render time, with the call's args when the call is in view", () => {
    const state = new PruneState();
    state.indexRecord(record("c1", "read", "skill text", 1020), { seedDedup: true });
    state.indexRecord(record("c2", "todowrite", "todos", 1040), { seedDedup: true });
    const isProtected = makeProtectionPredicate({ protectedTools: ["todowrite"], protectedPaths: ["**/skills/**/*.md"] });
    const withCall: AgentMessage[] = [
      assistantCalls([{ id: "c1", name: "read", args: { path: "/home/u/skills/x/SKILL.md" } }], 1010),
      toolResult("c1", "read", "skill text", 1020),
      assistantCalls([{ id: "c2", name: "todowrite" }], 1030),
      toolResult("c2", "todowrite", "todos", 1040),
    ];
    expect(stubArchivedResults(withCall, state, { isProtected, graceKeys: new Set() })).toBe(withCall);

    // Without the call only the tool-name rule can apply: the path-protected output is stubbed.
    const withoutCall = [toolResult("c1", "read", "skill text", 1020), toolResult("c2", "todowrite", "todos", 1040)];
    const out = stubArchivedResults(withoutCall, state, { isProtected, graceKeys: new Set() });
    expect(textOf(out[0])).toContain("Summarized in pruner summary");
    expect(out[1]).toBe(withoutCall[1]);
  });

  it("sees the args of the latest call with a result's id even when that call lies where results are dropped", () => {
    const state = new PruneState();
    state.indexRecord(record("c1", "read", "skill text", 1020), { seedDedup: true });
    state.indexRecord(record("c1", "read", "skill text", 3020), { seedDedup: true });
    const isProtected = makeProtectionPredicate({ protectedTools: [], protectedPaths: ["**/skills/**/*.md"] });
    // The id is reused: the first call (a plain file) and its result are inside a compressed span,
    // the second call (a skill) too, and only the second result is outside it.
    const messages: AgentMessage[] = [
      assistantCalls([{ id: "c1", name: "read", args: { path: "/home/u/notes.md" } }], 1010),
      toolResult("c1", "read", "skill text", 1020),
      assistantCalls([{ id: "c1", name: "read", args: { path: "/home/u/skills/x/SKILL.md" } }], 3010),
      toolResult("c1", "read", "skill text", 3020),
    ];
    const dropped = Uint8Array.of(1, 1, 1, 0);
    expect(stubArchivedResults(messages, state, { isProtected, graceKeys: new Set(), dropped })).toBe(messages);
    // Every archived result dropped: nothing to stub, the input array comes back.
    const allDropped = Uint8Array.of(1, 1, 1, 1);
    expect(stubArchivedResults(messages, state, { isProtected: () => false, graceKeys: new Set(), dropped: allDropped })).toBe(messages);
    expect(stubArchivedResults(messages, state, { isProtected: () => false, graceKeys: new Set(), dropped })[3]).not.toBe(messages[3]);
  });

  it("leaves a result in the recovery-grace set visible", () => {
    const state = new PruneState();
    state.indexRecord(record("q1", "context_tree_query", "recovered", 4000), { seedDedup: true });
    const messages = [toolResult("q1", "context_tree_query", "recovered", 4000)];
    expect(stubArchivedResults(messages, state, { isProtected: () => false, graceKeys: new Set(["q1@4000"]) })).toBe(messages);
    expect(stubArchivedResults(messages, state, noProtection)).not.toBe(messages);
  });
});

describe("phase 1: identity and purity", () => {
  it("returns the same array when nothing is archived, and when results already are their stubs", () => {
    const state = new PruneState();
    const messages = [user("hi", 1), toolResult("c1", "read", "x", 2)];
    expect(stubArchivedResults(messages, state, noProtection)).toBe(messages);

    state.indexRecord(record("c1", "read", "x", 2), { seedDedup: true });
    const once = stubArchivedResults(messages, state, noProtection);
    expect(once).not.toBe(messages);
    expect(stubArchivedResults(once, state, noProtection)).toBe(once);
  });

  it("never mutates the input messages", () => {
    const state = new PruneState();
    state.indexRecord(record("c1", "read", "x", 2), { seedDedup: true });
    const messages = [toolResult("c1", "read", "x", 2)];
    const before = structuredClone(messages);
    stubArchivedResults(messages, state, noProtection);
    expect(messages).toEqual(before);
  });
});

describe("phase 1: backfilled outputs (open chains, issue 13)", () => {
  it("get a stub naming tool, args excerpt, size and ref, never upstream's summary wording", () => {
    const state = new PruneState();
    state.indexRecord(record("c1", "read", "y".repeat(4000), 1020, { turnIndex: -1, args: { path: "src/a.ts" } }), { seedDedup: false });
    state.registerRef({ shortId: "t4", toolCallId: "c1", resultTimestamp: 1020 });
    const messages = [user("go", 1000), assistantCalls([{ id: "c1", name: "read" }], 1010), toolResult("c1", "read", "y".repeat(4000), 1020)];
    const out = stubArchivedResults(messages, state, noProtection);
    expect(textOf(out[2])).toBe(
      '[Archived output of read src/a.ts (~1000 tokens), ref `t4`: not shown to keep the context small. context_tree_query with ref `t4` returns it verbatim.]',
    );
    // Deterministic: a second render is the same array (nothing to change).
    expect(stubArchivedResults(out, state, noProtection)).toBe(out);
  });

  it("name the spill file when the output was spilled", () => {
    const state = new PruneState();
    const spilled = record("c2", "bash", "", 2000, { turnIndex: -1, args: { command: "cat big" }, spillBytes: 70000, resultPreview: "head", spillPath: "/s/b/c2.txt" });
    state.indexRecord(spilled, { seedDedup: false });
    state.registerRef({ shortId: "t9", toolCallId: "c2", resultTimestamp: 2000 });
    const out = stubArchivedResults([toolResult("c2", "bash", "x".repeat(70000), 2000)], state, noProtection);
    expect(textOf(out[0])).toBe(
      '[Archived output of bash cat big (70000 bytes), ref `t9`: not shown to keep the context small. context_tree_query with ref `t9` returns it verbatim. It is also in the file /s/b/c2.txt.]',
    );
  });
});
