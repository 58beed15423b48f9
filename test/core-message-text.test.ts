// Message reading helpers (UPSTREAM-FORMAT.md §1.2 content text, §4.1 synthetic-message test and
// detection args `input ?? arguments`, §4.5 extraction args `input ?? args ?? arguments ?? {}`).
import { describe, expect, it } from "vitest";
import {
  contentText,
  detectionArgs,
  extractionArgs,
  isSyntheticChainMessage,
  messageTimestamp,
  toolCallParts,
} from "../src/core/message-text.js";
import type { AgentMessage, ToolCallPart } from "../src/core/session-types.js";
import { assistantBlocks, assistantCalls, assistantText, syntheticChain, textPart, thinking, toolResult, user, userString } from "./helpers/messages.js";

describe("contentText", () => {
  it("returns string content as is", () => {
    expect(contentText("hello\nworld")).toBe("hello\nworld");
  });

  it("joins every text part with \\n, skipping non-text parts", () => {
    expect(contentText([textPart("a"), { type: "image", data: "x" }, textPart("b"), thinking("t")])).toBe("a\nb");
  });

  it("keeps empty text parts in the join (so two empties give one \\n)", () => {
    expect(contentText([textPart(""), textPart("")])).toBe("\n");
  });

  it("non-string, non-array content gives empty text", () => {
    expect(contentText(undefined)).toBe("");
    expect(contentText(42)).toBe("");
  });
});

describe("toolCallParts", () => {
  it("returns only toolCall blocks of an assistant message", () => {
    const msg = assistantCalls([{ id: "c1", name: "bash" }], 1, [thinking("t"), textPart("x")]);
    expect(toolCallParts(msg).map((p) => p.id)).toEqual(["c1"]);
  });

  it("returns none for a text-only assistant or another role", () => {
    expect(toolCallParts(assistantText("hi", 1))).toEqual([]);
    expect(toolCallParts(toolResult("c1", "bash", "x", 1))).toEqual([]);
  });
});

describe("detectionArgs vs extractionArgs", () => {
  const call = (fields: Partial<ToolCallPart>): ToolCallPart => ({ type: "toolCall", id: "c", name: "n", ...fields });

  it("detection prefers input over arguments", () => {
    expect(detectionArgs(call({ input: { a: 1 }, arguments: { b: 2 } }))).toEqual({ a: 1 });
  });

  it("detection ignores `args` (quirk §13.10)", () => {
    expect(detectionArgs(call({ args: { path: "p" } }))).toBeUndefined();
    expect(detectionArgs(call({ args: { a: 1 }, arguments: { b: 2 } }))).toEqual({ b: 2 });
  });

  it("extraction precedence is input ?? args ?? arguments ?? {}", () => {
    expect(extractionArgs(call({ input: { i: 1 }, args: { a: 1 }, arguments: { r: 1 } }))).toEqual({ i: 1 });
    expect(extractionArgs(call({ args: { a: 1 }, arguments: { r: 1 } }))).toEqual({ a: 1 });
    expect(extractionArgs(call({ arguments: { r: 1 } }))).toEqual({ r: 1 });
    expect(extractionArgs(call({}))).toEqual({});
  });

  it("`??` skips null but not falsy values like 0 or empty string", () => {
    expect(extractionArgs(call({ input: null, args: { a: 1 } }))).toEqual({ a: 1 });
    expect(extractionArgs(call({ input: "", args: { a: 1 } }))).toBe("");
  });
});

describe("isSyntheticChainMessage", () => {
  it("recognises a text-part synthetic message", () => {
    expect(isSyntheticChainMessage(syntheticChain("b1", 1))).toBe(true);
  });

  it("recognises string content and leading whitespace", () => {
    expect(isSyntheticChainMessage(userString('  \n\t<compressed-chain id="b1">', 1))).toBe(true);
    expect(isSyntheticChainMessage(syntheticChain("b2", 1, "\n  "))).toBe(true);
  });

  it("only the FIRST content part counts", () => {
    const msg: AgentMessage = { role: "user", content: [textPart("hi"), textPart("<compressed-chain")], timestamp: 1 };
    expect(isSyntheticChainMessage(msg)).toBe(false);
    const img: AgentMessage = { role: "user", content: [{ type: "image" }, textPart("<compressed-chain")], timestamp: 1 };
    expect(isSyntheticChainMessage(img)).toBe(false);
  });

  it("text merely containing the tag later is not synthetic", () => {
    expect(isSyntheticChainMessage(user("see <compressed-chain id=b1>", 1))).toBe(false);
  });

  it("non-user roles are never synthetic", () => {
    expect(isSyntheticChainMessage(assistantBlocks([textPart("<compressed-chain")], 1))).toBe(false);
  });
});

describe("messageTimestamp", () => {
  it("numbers only", () => {
    expect(messageTimestamp(user("x", 5))).toBe(5);
    expect(messageTimestamp({ role: "user", content: "x", timestamp: "5" } as unknown as AgentMessage)).toBeUndefined();
  });
});
