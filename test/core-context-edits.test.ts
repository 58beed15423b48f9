/**
 * pi 1.6's context edits as chainpress applies them (core/context-edits.ts, core/session-tree.ts):
 * latest edit on the branch wins, edits on another branch do not count, `null` omits, `{content}`
 * replaces content only, a malformed replacement leaves no content, and a compaction's checkpoint
 * and retain-none are read as pi reads them.
 */

import { describe, expect, it } from "vitest";
import { CONTENT_HIDDEN, editedMessage, editedOutputs, editedRecordText, editsOnBranch, HIDDEN_OUTPUT_TEXT, OMITTED_OUTPUT_TEXT } from "../src/core/context-edits.js";
import { PruneState } from "../src/core/prune-state.js";
import { pruneMessages } from "../src/core/render/prune-messages.js";
import type { AgentMessage, SessionEntry } from "../src/core/session-types.js";
import { branchMessages, contextMessages, walkBranch } from "../src/core/session-tree.js";

let clock = 1_000;
const iso = () => new Date(clock).toISOString();
function message(id: string, parentId: string | null, body: Record<string, unknown>): SessionEntry {
  clock += 10;
  return { type: "message", id, parentId, timestamp: iso(), message: { ...body, timestamp: clock } } as SessionEntry;
}
const user = (id: string, parentId: string | null, text: string) => message(id, parentId, { role: "user", content: [{ type: "text", text }] });
const call = (id: string, parentId: string, callId: string) => message(id, parentId, { role: "assistant", content: [{ type: "toolCall", id: callId, name: "bash", arguments: { command: "ls" } }], stopReason: "toolUse" });
const result = (id: string, parentId: string, callId: string, text: string) => message(id, parentId, { role: "toolResult", toolCallId: callId, toolName: "bash", content: [{ type: "text", text }], isError: false });
const reply = (id: string, parentId: string, text: string) => message(id, parentId, { role: "assistant", content: [{ type: "text", text }], stopReason: "stop" });
const edit = (id: string, parentId: string, targetId: string, replacement: unknown): SessionEntry => ({ type: "context_edit", id, parentId, timestamp: iso(), targetId, replacement }) as SessionEntry;

/** role and text of each message, the comparison pi's projection tests make. */
function shape(messages: readonly AgentMessage[]): string[] {
  return messages.map((m) => {
    const content = (m as { content?: unknown }).content;
    const text = typeof content === "string" ? content : Array.isArray(content) ? content.map((p: { text?: string; id?: string }) => p.text ?? `call:${p.id}`).join("|") : String((m as { summary?: string }).summary ?? "");
    return `${m.role}:${text}`;
  });
}

describe("editedMessage", () => {
  const tool = { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: "secret" }], isError: false, timestamp: 5 } as AgentMessage;
  it("omits on null, keeps an unedited message as the same object", () => {
    expect(editedMessage(tool, null)).toBeUndefined();
    expect(editedMessage(tool, undefined)).toBe(tool);
  });
  it("replaces only the content; a string becomes one text block for tool results and assistants", () => {
    const edited = editedMessage(tool, { content: "[redacted]" })!;
    expect(edited).toEqual({ ...tool, content: [{ type: "text", text: "[redacted]" }] });
    const asUser = editedMessage({ role: "user", content: "hi", timestamp: 1 } as AgentMessage, { content: "bye" });
    expect(asUser).toEqual({ role: "user", content: "bye", timestamp: 1 });
  });
  it("leaves messages of other roles whole", () => {
    const summary = { role: "compactionSummary", summary: "s", timestamp: 1 } as AgentMessage;
    expect(editedMessage(summary, { content: "x" })).toBe(summary);
  });
});

describe("a branch with edits", () => {
  const entries = [
    user("u1", null, "task"),
    call("a1", "u1", "c1"),
    result("r1", "a1", "c1", "secret token"),
    reply("f1", "r1", "failed attempt"),
    edit("e1", "f1", "r1", { content: "first edit" }),
    edit("e2", "e1", "r1", { content: "[redacted]" }),
    edit("e3", "e2", "f1", null),
    edit("bad", "e3", "r1", { content: 42 }),
    reply("f2", "bad", "retried reply"),
  ];

  it("the latest edit wins, null omits", () => {
    const branch = walkBranch(entries).entries.filter((e) => e.id !== "bad");
    const edits = editsOnBranch(branch);
    expect(edits.get("r1")).toEqual({ content: "[redacted]" });
    expect(shape(contextMessages(branch, edits))).toEqual(["user:task", "assistant:call:c1", "toolResult:[redacted]", "assistant:retried reply"]);
    expect(shape(branchMessages(branch, edits))).toEqual(shape(contextMessages(branch, edits)));
  });

  it("a malformed latest edit wins too, as in pi 1.6: its target keeps no content", () => {
    const branch = walkBranch(entries).entries;
    const edits = editsOnBranch(branch);
    expect(edits.get("r1")).toBe(CONTENT_HIDDEN);
    expect(shape(contextMessages(branch, edits))).toEqual(["user:task", "assistant:call:c1", "toolResult:", "assistant:retried reply"]);
    expect(shape(branchMessages(branch, edits))).toEqual(shape(contextMessages(branch, edits)));
  });

  it("edits on another branch do not count", () => {
    const forked = [...entries, user("u2", "r1", "other way")];
    const branch = walkBranch(forked).entries;
    expect(shape(contextMessages(branch, editsOnBranch(branch)))).toEqual(["user:task", "assistant:call:c1", "toolResult:secret token", "user:other way"]);
  });

  it("archived copies follow the edit: the model reads the edit's text, or nothing for an omission or a malformed edit", () => {
    const branch = walkBranch(entries).entries;
    const ts = (branch[2] as { message: { timestamp: number } }).message.timestamp;
    const wellFormed = branch.filter((e) => e.id !== "bad");
    const outputs = editedOutputs(wellFormed, editsOnBranch(wellFormed));
    expect(editedRecordText({ toolCallId: "c1", resultTimestamp: ts }, outputs)).toBe("[redacted]");
    expect(editedRecordText({ toolCallId: "c2", resultTimestamp: ts }, outputs)).toBeUndefined();
    const omitted = editedOutputs(branch, new Map([["r1", null]]));
    expect(editedRecordText({ toolCallId: "c1", resultTimestamp: ts }, omitted)).toBe(OMITTED_OUTPUT_TEXT);
    const hidden = editedOutputs(branch, editsOnBranch(branch));
    expect([...hidden.values()]).toEqual([{ text: null, hidden: true }]);
    expect(editedRecordText({ toolCallId: "c1", resultTimestamp: ts }, hidden)).toBe(HIDDEN_OUTPUT_TEXT);
  });
});

describe("compactions as pi 1.6 writes them", () => {
  const system = (id: string, parentId: string | null, text: string) => message(id, parentId, { role: "system", content: text });
  it("the checkpoint leads, kept system messages are dropped, and retain-none keeps nothing", () => {
    const base = [system("s1", null, "prompt v1"), user("u1", "s1", "one"), reply("a1", "u1", "done one"), system("s2", "a1", "prompt v2"), user("u2", "s2", "two"), reply("a2", "u2", "done two")];
    const compaction = (firstKeptEntryId: string): SessionEntry =>
      ({ type: "compaction", id: "k1", parentId: "a2", timestamp: iso(), summary: "summary", firstKeptEntryId, tokensBefore: 9, systemMessage: { role: "system", content: "checkpoint", timestamp: 1 } }) as SessionEntry;
    const after = (parent: string) => [user("u3", parent, "three")];
    const kept = walkBranch([...base, compaction("s2"), ...after("k1")]).entries;
    expect(shape(contextMessages(kept))).toEqual(["system:checkpoint", "compactionSummary:summary", "user:two", "assistant:done two", "user:three"]);
    const none = walkBranch([...base, compaction("k1"), ...after("k1")]).entries;
    expect(shape(contextMessages(none))).toEqual(["system:checkpoint", "compactionSummary:summary", "user:three"]);
  });
});

describe("an edit that takes a call's tool calls away", () => {
  it("leaves no tool result without its call in the rendered context", () => {
    const entries = [user("u1", null, "task"), call("a1", "u1", "c9"), result("r1", "a1", "c9", "out"), reply("f1", "r1", "done"), edit("e1", "f1", "a1", { content: "I looked around." })];
    const branch = walkBranch(entries).entries;
    const context = contextMessages(branch, editsOnBranch(branch));
    expect(shape(context)).toEqual(["user:task", "assistant:I looked around.", "toolResult:out", "assistant:done"]);
    const { messages } = pruneMessages(context, new PruneState());
    expect(shape(messages)).toEqual(["user:task", "assistant:I looked around.", "assistant:done"]);
  });
});
