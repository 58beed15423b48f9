import { describe, expect, it } from "vitest";
import { sweepOrphans } from "../src/core/render/orphan-sweep.js";
import type { AgentMessage, AssistantMessage, ToolResultMessage, UserMessage } from "../src/core/session-types.js";

// --- local factories -------------------------------------------------------------------------
const user = (text: string, ts: number): UserMessage => ({ role: "user", content: [{ type: "text", text }], timestamp: ts });
const assistantCalls = (ids: string[], ts: number): AssistantMessage => ({
  role: "assistant",
  content: ids.map((id) => ({ type: "toolCall", id, name: "bash", arguments: {} })),
  timestamp: ts,
});
const toolResult = (id: string, ts: number): ToolResultMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName: "bash",
  content: [{ type: "text", text: "out" }],
  isError: false,
  timestamp: ts,
});

describe("phase 4: orphan sweep", () => {
  it("keeps results answering the preceding assistant turn and returns the same array", () => {
    const messages = [user("go", 1), assistantCalls(["a", "b"], 2), toolResult("b", 3), toolResult("a", 4)];
    const result = sweepOrphans(messages);
    expect(result.messages).toBe(messages);
    expect(result.diagnostics).toEqual([]);
  });

  it("sweeps results with no opener, after a barrier, or answering a call twice", () => {
    const messages: AgentMessage[] = [
      toolResult("a", 1), // nothing open yet
      assistantCalls(["b"], 2),
      toolResult("b", 3),
      toolResult("b", 4), // b already closed
      assistantCalls(["c"], 5),
      user("interrupt", 6), // barrier closes c
      toolResult("c", 7),
    ];
    const result = sweepOrphans(messages);
    expect(result.messages).toEqual([messages[1], messages[2], messages[4], messages[5]]);
    expect(result.diagnostics).toHaveLength(1);
    expect(result.diagnostics[0]!.detail).toBe("swept 3 orphan toolResult(s): a, b, c");
    expect(messages).toHaveLength(7); // input array untouched
  });

  it("a new assistant turn replaces the open set", () => {
    const messages = [assistantCalls(["a"], 1), assistantCalls(["b"], 2), toolResult("a", 3), toolResult("b", 4)];
    expect(sweepOrphans(messages).messages).toEqual([messages[0], messages[1], messages[3]]);
  });

  it("keys the report by SHA-1 of the sorted ids and lists at most five", () => {
    // Reference values: `printf 'a,b' | sha1sum` and `printf 'o1,o2,o3,o4,o5,o6,o7' | sha1sum`.
    expect(sweepOrphans([toolResult("b", 1), toolResult("a", 2)]).diagnostics).toEqual([
      { kind: "orphan-sweep", detail: "swept 2 orphan toolResult(s): a, b", dedupKey: "5d8b1241b0484dd2" },
    ]);
    const seven = ["o7", "o3", "o1", "o5", "o2", "o6", "o4"].map((id, i) => toolResult(id, i));
    expect(sweepOrphans(seven).diagnostics).toEqual([
      { kind: "orphan-sweep", detail: "swept 7 orphan toolResult(s): o1, o2, o3, o4, o5 ... +2 more", dedupKey: "1436ab543d21fcd1" },
    ]);
  });
});
