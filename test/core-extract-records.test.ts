// Record extraction (UPSTREAM-FORMAT.md §4.5): walk strictly inside the span; remember toolCall
// blocks id → (name, input ?? args ?? arguments ?? {}) (later block overwrites); for each toolResult
// skip when not opened in the span, protected (bare id), non-number timestamp, or already indexed;
// otherwise a record with text parts joined "\n" and isError === true.
import { describe, expect, it } from "vitest";
import { outputFields, spanOutputs } from "../src/core/extract-records.js";
import type { AgentMessage } from "../src/core/session-types.js";
import { assistantBlocks, assistantCalls, textPart, thinking, toolResult } from "./helpers/messages.js";

const noSkip = () => false;
const noProtected = new Set<string>();

/** The occurrence keys a chain would archive, in span order (what planning reserves refs for). */
function plannedKeys(inner: AgentMessage[], protectedIds: Set<string>, skip: (k: string) => boolean): string[] {
  return [...spanOutputs(inner, protectedIds, skip)].map((output) => output.key);
}

function fieldsOf(inner: AgentMessage[], protectedIds: Set<string> = noProtected, skip: (k: string) => boolean = noSkip) {
  return [...spanOutputs(inner, protectedIds, skip)].map(outputFields);
}

describe("spanOutputs / outputFields — happy path", () => {
  it("produces one output per answered call with the exact backfill fields", () => {
    const inner = [
      assistantCalls([{ id: "c1", name: "read", args: { path: "a" } }, { id: "c2", name: "bash", args: { command: "ls" } }], 1001),
      toolResult("c1", "read", "A", 1002),
      toolResult("c2", "bash", "B", 1003, true),
    ];
    expect(fieldsOf(inner)).toEqual([
      { toolCallId: "c1", toolName: "read", args: { path: "a" }, resultText: "A", isError: false, resultTimestamp: 1002 },
      { toolCallId: "c2", toolName: "bash", args: { command: "ls" }, resultText: "B", isError: true, resultTimestamp: 1003 },
    ]);
  });

  it("keys are occurrence keys id@resultTimestamp, in span order", () => {
    const inner = [assistantCalls([{ id: "x", name: "bash" }], 1), toolResult("x", "bash", "1", 2), assistantCalls([{ id: "x", name: "bash" }], 3), toolResult("x", "bash", "2", 4)];
    expect(plannedKeys(inner, noProtected, noSkip)).toEqual(["x@2", "x@4"]);
  });

  it("toolName comes from the call block, not from the toolResult", () => {
    const inner = [assistantCalls([{ id: "c", name: "from_call" }], 1), toolResult("c", "from_result", "x", 2)];
    expect(fieldsOf(inner)[0]!.toolName).toBe("from_call");
  });
});

describe("spanOutputs — skips", () => {
  it("skips a protected id (bare-id match)", () => {
    const inner = [assistantCalls([{ id: "p", name: "todowrite" }, { id: "k", name: "bash" }], 1), toolResult("p", "todowrite", "x", 2), toolResult("k", "bash", "y", 3)];
    expect(plannedKeys(inner, new Set(["p"]), noSkip)).toEqual(["k@3"]);
  });

  it("skips already-indexed occurrence keys (skip callback receives id@ts)", () => {
    const inner = [assistantCalls([{ id: "a", name: "bash" }, { id: "b", name: "bash" }], 1), toolResult("a", "bash", "x", 2), toolResult("b", "bash", "y", 3)];
    const asked: string[] = [];
    const keys = plannedKeys(inner, noProtected, (k) => {
      asked.push(k);
      return k === "a@2";
    });
    expect(keys).toEqual(["b@3"]);
    expect(asked).toEqual(["a@2", "b@3"]);
  });

  it("skips a result whose call was not opened inside the span", () => {
    const inner = [toolResult("orphan", "bash", "x", 2), assistantCalls([{ id: "a", name: "bash" }], 3), toolResult("a", "bash", "y", 4)];
    expect(plannedKeys(inner, noProtected, noSkip)).toEqual(["a@4"]);
  });

  it("a result BEFORE its call block in the span is skipped (calls are remembered as the walk goes)", () => {
    const inner = [toolResult("a", "bash", "early", 2), assistantCalls([{ id: "a", name: "bash" }], 3)];
    expect(plannedKeys(inner, noProtected, noSkip)).toEqual([]);
  });

  it("skips a result with a non-number timestamp", () => {
    const bad = { ...toolResult("a", "bash", "x", 0), timestamp: "2026-01-01" } as unknown as AgentMessage;
    const missing = toolResult("b", "bash", "y", 0) as unknown as Record<string, unknown>;
    delete missing.timestamp;
    const inner = [assistantCalls([{ id: "a", name: "bash" }, { id: "b", name: "bash" }, { id: "c", name: "bash" }], 1), bad, missing as unknown as AgentMessage, toolResult("c", "bash", "z", 5)];
    expect(plannedKeys(inner, noProtected, noSkip)).toEqual(["c@5"]);
  });

  it("protection is checked before the skip callback (protected keys are never even looked up)", () => {
    const inner = [assistantCalls([{ id: "p", name: "x" }], 1), toolResult("p", "x", "y", 2)];
    const asked: string[] = [];
    plannedKeys(inner, new Set(["p"]), (k) => {
      asked.push(k);
      return false;
    });
    expect(asked).toEqual([]);
  });
});

describe("spanOutputs — args precedence", () => {
  const resultFor = (id: string) => toolResult(id, "t", "r", 9);

  it("input wins over args and arguments", () => {
    const inner = [assistantBlocks([{ type: "toolCall", id: "a", name: "t", input: { i: 1 }, args: { g: 1 }, arguments: { r: 1 } }], 1), resultFor("a")];
    expect(fieldsOf(inner)[0]!.args).toEqual({ i: 1 });
  });

  it("args wins over arguments (block.args fallback when input is absent)", () => {
    const inner = [assistantBlocks([{ type: "toolCall", id: "a", name: "t", args: { g: 1 }, arguments: { r: 1 } }], 1), resultFor("a")];
    expect(fieldsOf(inner)[0]!.args).toEqual({ g: 1 });
  });

  it("arguments is used when neither input nor args exist (pi's shape)", () => {
    const inner = [assistantCalls([{ id: "a", name: "t", args: { r: 1 } }], 1), resultFor("a")];
    expect(fieldsOf(inner)[0]!.args).toEqual({ r: 1 });
  });

  it("no args at all → {}", () => {
    const inner = [assistantBlocks([{ type: "toolCall", id: "a", name: "t" }], 1), resultFor("a")];
    expect(fieldsOf(inner)[0]!.args).toEqual({});
  });

  it("null input falls through (??)", () => {
    const inner = [assistantBlocks([{ type: "toolCall", id: "a", name: "t", input: null, arguments: { r: 2 } }], 1), resultFor("a")];
    expect(fieldsOf(inner)[0]!.args).toEqual({ r: 2 });
  });

  it("a later call block with the same id overwrites name and args", () => {
    const inner = [
      assistantCalls([{ id: "a", name: "first", args: { v: 1 } }], 1),
      assistantCalls([{ id: "a", name: "second", args: { v: 2 } }], 2),
      toolResult("a", "second", "r", 3),
    ];
    const [f] = fieldsOf(inner);
    expect(f!.toolName).toBe("second");
    expect(f!.args).toEqual({ v: 2 });
  });

  it("each result takes the call block seen most recently before it", () => {
    const inner = [
      assistantCalls([{ id: "a", name: "first", args: { v: 1 } }], 1),
      toolResult("a", "first", "r1", 2),
      assistantCalls([{ id: "a", name: "second", args: { v: 2 } }], 3),
      toolResult("a", "second", "r2", 4),
    ];
    expect(fieldsOf(inner).map((f) => [f.toolName, f.args])).toEqual([
      ["first", { v: 1 }],
      ["second", { v: 2 }],
    ]);
  });
});

describe("outputFields — text and isError", () => {
  it("joins text parts with \\n and ignores non-text parts", () => {
    const result = toolResult("a", "t", ["line1", "line2"], 2);
    (result.content as unknown[]).splice(1, 0, { type: "image", data: "..." }, thinking("no"));
    const inner = [assistantCalls([{ id: "a", name: "t" }], 1), result];
    expect(fieldsOf(inner)[0]!.resultText).toBe("line1\nline2");
  });

  it("empty content → empty resultText", () => {
    const result = { ...toolResult("a", "t", "x", 2), content: [] } as AgentMessage;
    expect(fieldsOf([assistantCalls([{ id: "a", name: "t" }], 1), result])[0]!.resultText).toBe("");
  });

  it("isError is strictly `=== true` (truthy non-boolean values give false)", () => {
    const mk = (id: string, isError: unknown, ts: number) => ({ ...toolResult(id, "t", "x", ts), isError }) as unknown as AgentMessage;
    const inner = [assistantCalls(["a", "b", "c", "d"].map((id) => ({ id, name: "t" })), 1), mk("a", true, 2), mk("b", "true", 3), mk("c", 1, 4), mk("d", undefined, 5)];
    expect(fieldsOf(inner).map((f) => f.isError)).toEqual([true, false, false, false]);
  });

  it("text content parts inside an assistant message are not results", () => {
    const inner = [assistantBlocks([textPart("hi"), { type: "toolCall", id: "a", name: "t", arguments: {} }], 1), toolResult("a", "t", "r", 2)];
    expect(plannedKeys(inner, noProtected, noSkip)).toEqual(["a@2"]);
  });
});
