// detectChains / withClosingMessage against UPSTREAM-FORMAT.md §4.1 (state machine), §2.3
// (ChainRange fields) and upstream's chain-detector checklist in §10 (22 tests).
import { describe, expect, it } from "vitest";
import { detectChains, withClosingMessage } from "../src/core/detect-chains.js";
import { makeProtectionPredicate } from "../src/core/protection.js";
import { selectEligible } from "../src/core/select-eligible.js";
import type { AgentMessage } from "../src/core/session-types.js";
import {
  assistantBlocks,
  assistantCalls,
  assistantText,
  closedChain,
  syntheticChain,
  textPart,
  thinking,
  toolResult,
  user,
  userString,
} from "./helpers/messages.js";

const protectTodo = makeProtectionPredicate({ protectedTools: ["todowrite"], protectedPaths: [] });
const protectSkills = makeProtectionPredicate({ protectedTools: [], protectedPaths: ["**/skills/**/*.md"] });

describe("detectChains — basics", () => {
  it("empty input → no chains", () => {
    expect(detectChains([])).toEqual([]);
  });

  it("single closed chain: start, middles, keys, final", () => {
    const msgs = [
      user("q", 1000),
      assistantCalls([{ id: "c1", name: "bash", args: { command: "ls" } }], 1001),
      toolResult("c1", "bash", "a b", 1002),
      assistantText("done", 1003),
    ];
    expect(detectChains(msgs)).toEqual([
      {
        startUserTimestamp: 1000,
        middleToolCallIds: ["c1"],
        middleOccurrenceKeys: ["c1@1002"],
        protectedToolCallIds: [],
        finalAssistantTimestamp: 1003,
      },
    ]);
  });

  it("multiple chains are emitted in message order", () => {
    const msgs = [...closedChain(1000, [{ id: "a" }]), ...closedChain(2000, [{ id: "b" }]), ...closedChain(3000, [{ id: "c" }])];
    expect(detectChains(msgs).map((c) => c.startUserTimestamp)).toEqual([1000, 2000, 3000]);
  });

  it("an open chain at the end of input is not emitted (closing assistant absent → newest chain open)", () => {
    const msgs = [
      ...closedChain(1000, [{ id: "a" }]),
      user("q2", 2000),
      assistantCalls([{ id: "b", name: "bash" }], 2001),
      toolResult("b", "bash", "x", 2002),
    ];
    expect(detectChains(msgs).map((c) => c.startUserTimestamp)).toEqual([1000]);
  });

  it("a pure conversation (user, text reply) is emitted with zero middles", () => {
    expect(detectChains([user("hi", 1), assistantText("hello", 2)])).toEqual([
      { startUserTimestamp: 1, middleToolCallIds: [], middleOccurrenceKeys: [], protectedToolCallIds: [], finalAssistantTimestamp: 2 },
    ]);
  });

  it("messages before the first user message are ignored", () => {
    const msgs = [assistantCalls([{ id: "z", name: "bash" }], 1), toolResult("z", "bash", "x", 2), assistantText("t", 3), ...closedChain(10, [{ id: "a" }])];
    const chains = detectChains(msgs);
    expect(chains).toHaveLength(1);
    expect(chains[0]!.middleToolCallIds).toEqual(["a"]);
  });

  it("a text reply while idle is ignored (no empty chain emitted)", () => {
    const msgs = [...closedChain(10, [{ id: "a" }]), assistantText("extra", 50)];
    expect(detectChains(msgs)).toHaveLength(1);
  });

  it("an assistant with only thinking + text closes the chain (text-only may contain thinking)", () => {
    const msgs = [user("q", 1), assistantCalls([{ id: "a", name: "bash" }], 2), toolResult("a", "bash", "x", 3), assistantText("ok", 4, ["hmm"])];
    expect(detectChains(msgs)[0]!.finalAssistantTimestamp).toBe(4);
  });

  it("an assistant with a toolCall block plus text does NOT close the chain", () => {
    const msgs = [
      user("q", 1),
      assistantBlocks([textPart("let me check"), { type: "toolCall", id: "a", name: "bash", arguments: {} }], 2),
      toolResult("a", "bash", "x", 3),
      assistantText("done", 4),
    ];
    const [chain] = detectChains(msgs);
    expect(chain!.finalAssistantTimestamp).toBe(4);
    expect(chain!.middleToolCallIds).toEqual(["a"]);
  });

  it("a toolCall block without id or name is skipped but the message still counts as a tool-call message (no close)", () => {
    const msgs = [
      user("q", 1),
      assistantBlocks([{ type: "toolCall", name: "bash" }, { type: "toolCall", id: "noname" }], 2),
      assistantText("done", 3),
    ];
    const chains = detectChains(msgs);
    expect(chains).toHaveLength(1);
    expect(chains[0]!.middleToolCallIds).toEqual([]);
    expect(chains[0]!.finalAssistantTimestamp).toBe(3);
  });

  it("other roles (custom, bashExecution) are ignored inside a chain", () => {
    const msgs: AgentMessage[] = [
      user("q", 1),
      assistantCalls([{ id: "a", name: "bash" }], 2),
      { role: "custom", customType: "x", content: "c", timestamp: 3 },
      { role: "bashExecution", command: "ls", timestamp: 4 },
      toolResult("a", "bash", "x", 5),
      assistantText("done", 6),
    ];
    const [chain] = detectChains(msgs);
    expect(chain!.middleToolCallIds).toEqual(["a"]);
    expect(chain!.finalAssistantTimestamp).toBe(6);
  });

  it("a toolResult with an empty toolCallId is ignored", () => {
    const msgs = [user("q", 1), assistantCalls([{ id: "a", name: "bash" }], 2), toolResult("", "bash", "x", 3), assistantText("d", 4)];
    const [chain] = detectChains(msgs);
    expect(chain!.middleToolCallIds).toEqual(["a"]);
    expect(chain!.middleOccurrenceKeys).toEqual([]);
  });
});

describe("detectChains — synthetic chain messages", () => {
  it("a synthetic <compressed-chain message does not start a chain", () => {
    const msgs = [syntheticChain("b1", 500), assistantCalls([{ id: "a", name: "bash" }], 501), toolResult("a", "bash", "x", 502), assistantText("d", 503)];
    expect(detectChains(msgs)).toEqual([]);
  });

  it("a synthetic message with leading whitespace is still not a start", () => {
    const msgs = [userString("\n   <compressed-chain id=\"b1\" tools=\"\">x</compressed-chain>", 500), assistantText("d", 501)];
    expect(detectChains(msgs)).toEqual([]);
  });

  it("synthetic passthrough inside a real sequence neither interrupts nor starts a chain", () => {
    // Rendered shape: start user, synthetic right after it, then the closing assistant.
    const msgs = [user("q", 1000), syntheticChain("b1", 9999), assistantCalls([{ id: "a", name: "bash" }], 1001), toolResult("a", "bash", "x", 1002), assistantText("d", 1003)];
    expect(detectChains(msgs)).toEqual([
      { startUserTimestamp: 1000, middleToolCallIds: ["a"], middleOccurrenceKeys: ["a@1002"], protectedToolCallIds: [], finalAssistantTimestamp: 1003 },
    ]);
  });
});

describe("detectChains — interrupted chains", () => {
  it("a second user message interrupts the chain → finalAssistantTimestamp null, then a new chain starts", () => {
    const msgs = [
      user("q1", 1000),
      assistantCalls([{ id: "a", name: "bash" }], 1001),
      toolResult("a", "bash", "x", 1002),
      user("q2", 2000),
      assistantCalls([{ id: "b", name: "bash" }], 2001),
      toolResult("b", "bash", "y", 2002),
      assistantText("d", 2003),
    ];
    const chains = detectChains(msgs);
    expect(chains.map((c) => [c.startUserTimestamp, c.finalAssistantTimestamp])).toEqual([
      [1000, null],
      [2000, 2003],
    ]);
  });

  it("middleOccurrenceKeys are kept on interrupted chains", () => {
    const msgs = [user("q1", 1000), assistantCalls([{ id: "a", name: "bash" }], 1001), toolResult("a", "bash", "x", 1002), user("q2", 2000)];
    const [chain] = detectChains(msgs);
    expect(chain!.finalAssistantTimestamp).toBeNull();
    expect(chain!.middleOccurrenceKeys).toEqual(["a@1002"]);
  });
});

describe("detectChains — middle ids", () => {
  it("collects ids from both call blocks and results, de-duplicated, first-seen order", () => {
    const msgs = [
      user("q", 1),
      assistantCalls([{ id: "c2", name: "bash" }, { id: "c1", name: "read" }], 2),
      toolResult("c1", "read", "x", 3),
      toolResult("c2", "bash", "y", 4),
      toolResult("orphan", "bash", "z", 5), // a result whose call is not in the chain still counts
      assistantText("d", 6),
    ];
    expect(detectChains(msgs)[0]!.middleToolCallIds).toEqual(["c2", "c1", "orphan"]);
  });

  it("a call without a result contributes an id but no occurrence key", () => {
    const msgs = [user("q", 1), assistantCalls([{ id: "c1", name: "bash" }, { id: "c2", name: "bash" }], 2), toolResult("c1", "bash", "x", 3), assistantText("d", 4)];
    const [chain] = detectChains(msgs);
    expect(chain!.middleToolCallIds).toEqual(["c1", "c2"]);
    expect(chain!.middleOccurrenceKeys).toEqual(["c1@3"]);
  });

  it("middleOccurrenceKeys: one per result; a reused id inside one chain gives two keys but one id", () => {
    const msgs = [
      user("q", 1),
      assistantCalls([{ id: "x", name: "bash" }], 2),
      toolResult("x", "bash", "1", 3),
      assistantCalls([{ id: "x", name: "bash" }], 4),
      toolResult("x", "bash", "2", 5),
      assistantText("d", 6),
    ];
    const [chain] = detectChains(msgs);
    expect(chain!.middleToolCallIds).toEqual(["x"]);
    expect(chain!.middleOccurrenceKeys).toEqual(["x@3", "x@5"]);
  });

  it("middleOccurrenceKeys are distinct across chains reusing an id", () => {
    const msgs = [...closedChain(1000, [{ id: "call_0" }]), ...closedChain(2000, [{ id: "call_0" }])];
    const chains = detectChains(msgs);
    expect(chains[0]!.middleToolCallIds).toEqual(["call_0"]);
    expect(chains[1]!.middleToolCallIds).toEqual(["call_0"]);
    expect(chains[0]!.middleOccurrenceKeys).toEqual(["call_0@1002"]);
    expect(chains[1]!.middleOccurrenceKeys).toEqual(["call_0@2002"]);
  });

  it("a result without a numeric timestamp contributes the bare id as its key", () => {
    const r = toolResult("c1", "bash", "x", 0) as unknown as Record<string, unknown>;
    delete r.timestamp;
    const msgs = [user("q", 1), assistantCalls([{ id: "c1", name: "bash" }], 2), r as unknown as AgentMessage, assistantText("d", 4)];
    expect(detectChains(msgs)[0]!.middleOccurrenceKeys).toEqual(["c1"]);
  });
});

describe("detectChains — protection", () => {
  it("protectedToolCallIds is empty without a predicate", () => {
    const msgs = closedChain(1, [{ id: "t", name: "todowrite" }]);
    expect(detectChains(msgs)[0]!.protectedToolCallIds).toEqual([]);
  });

  it("protects by tool name from the call-block branch", () => {
    // Result says "other" so only the call block can mark it.
    const msgs = [user("q", 1), assistantCalls([{ id: "t1", name: "todowrite" }], 2), toolResult("t1", "other", "x", 3), assistantText("d", 4)];
    expect(detectChains(msgs, protectTodo)[0]!.protectedToolCallIds).toEqual(["t1"]);
  });

  it("protects by tool name from the toolResult branch", () => {
    // Call block says "other"; the toolResult's toolName marks it.
    const msgs = [user("q", 1), assistantCalls([{ id: "t1", name: "other" }], 2), toolResult("t1", "todowrite", "x", 3), assistantText("d", 4)];
    expect(detectChains(msgs, protectTodo)[0]!.protectedToolCallIds).toEqual(["t1"]);
  });

  it("protection does not leak across chains (same id reused by an unprotected tool)", () => {
    const msgs = [...closedChain(1000, [{ id: "t1", name: "todowrite" }]), ...closedChain(2000, [{ id: "t1", name: "bash" }])];
    const chains = detectChains(msgs, protectTodo);
    expect(chains[0]!.protectedToolCallIds).toEqual(["t1"]);
    expect(chains[1]!.protectedToolCallIds).toEqual([]);
  });

  it("protects by args.path matching the skills glob (arguments)", () => {
    const msgs = [
      user("q", 1),
      assistantCalls([{ id: "r1", name: "read", args: { path: "repo/skills/x/SKILL.md" } }, { id: "r2", name: "read", args: { path: "repo/src/a.ts" } }], 2),
      toolResult("r1", "read", "skill", 3),
      toolResult("r2", "read", "code", 4),
      assistantText("d", 5),
    ];
    expect(detectChains(msgs, protectSkills)[0]!.protectedToolCallIds).toEqual(["r1"]);
  });

  it("detection reads `input` before `arguments` for the path check", () => {
    const msgs = [
      user("q", 1),
      assistantBlocks([{ type: "toolCall", id: "r1", name: "read", input: { path: "src/a.ts" }, arguments: { path: "skills/x.md" } }], 2),
      toolResult("r1", "read", "x", 3),
      assistantText("d", 4),
    ];
    expect(detectChains(msgs, protectSkills)[0]!.protectedToolCallIds).toEqual([]);
  });

  it("detection ignores a call's `args` field (quirk §13.10: input ?? arguments only)", () => {
    const msgs = [
      user("q", 1),
      assistantBlocks([{ type: "toolCall", id: "r1", name: "read", args: { path: "skills/x.md" } }], 2),
      toolResult("r1", "read", "x", 3),
      assistantText("d", 4),
    ];
    expect(detectChains(msgs, protectSkills)[0]!.protectedToolCallIds).toEqual([]);
  });

  it("path protection cannot come from the result branch (it passes undefined args)", () => {
    const seen: unknown[] = [];
    const spy = (name: string, args: unknown) => {
      if (name === "read") seen.push(args);
      return false;
    };
    detectChains([user("q", 1), toolResult("r1", "read", "x", 3), assistantText("d", 4)], spy);
    expect(seen).toEqual([undefined]);
  });

  it("protection is recorded on interrupted chains too", () => {
    const msgs = [user("q", 1), assistantCalls([{ id: "t1", name: "todowrite" }], 2), toolResult("t1", "todowrite", "x", 3), user("q2", 10)];
    const [chain] = detectChains(msgs, protectTodo);
    expect(chain!.finalAssistantTimestamp).toBeNull();
    expect(chain!.protectedToolCallIds).toEqual(["t1"]);
  });
});

describe("withClosingMessage", () => {
  const branch = closedChain(1000, [{ id: "a" }]).slice(0, -1); // ends with the toolResult

  it("undefined closing → the very same array reference", () => {
    expect(withClosingMessage(branch, undefined)).toBe(branch);
  });

  it("appends the closing message when missing, without mutating the input", () => {
    const closing = assistantText("done", 5000);
    const before = branch.length;
    const out = withClosingMessage(branch, closing);
    expect(out).toHaveLength(before + 1);
    expect(out[out.length - 1]).toBe(closing);
    expect(branch).toHaveLength(before);
  });

  it("does not append twice when the array already ends with the same role and timestamp", () => {
    const closing = assistantText("done", 5000);
    const withIt = [...branch, closing];
    const out = withClosingMessage(withIt, assistantText("done (copy)", 5000));
    expect(out).toBe(withIt);
  });

  it("same timestamp but different role is appended", () => {
    const last = branch[branch.length - 1]!; // toolResult at 1002
    const closing = assistantText("done", last.timestamp as number);
    expect(withClosingMessage(branch, closing)).toHaveLength(branch.length + 1);
  });

  it("makes the newest chain close, so with window K it is the one kept back", () => {
    // Chains 1000 and 2000 closed, 3000 open until the closing message is threaded in.
    const msgs = [...closedChain(1000, [{ id: "a" }]), ...closedChain(2000, [{ id: "b" }]), user("q3", 3000), assistantCalls([{ id: "c", name: "bash" }], 3001), toolResult("c", "bash", "x", 3002)];
    const never = () => false;
    expect(detectChains(msgs)).toHaveLength(2);
    const withClose = withClosingMessage(msgs, assistantText("done", 3003));
    const chains = detectChains(withClose);
    expect(chains.map((c) => c.finalAssistantTimestamp)).toEqual([1003, 2003, 3003]);
    // K = 1: without the closing message chain 2000 would be held back; with it, 3000 is.
    expect(selectEligible(detectChains(msgs), 1, never).map((c) => c.startUserTimestamp)).toEqual([1000]);
    expect(selectEligible(chains, 1, never).map((c) => c.startUserTimestamp)).toEqual([1000, 2000]);
  });
});

describe("detectChains — thinking-only assistant", () => {
  it("an assistant with only a thinking block (no toolCall) closes the chain", () => {
    const msgs = [user("q", 1), assistantCalls([{ id: "a", name: "bash" }], 2), toolResult("a", "bash", "x", 3), assistantBlocks([thinking("...")], 4)];
    expect(detectChains(msgs)[0]!.finalAssistantTimestamp).toBe(4);
  });
});
