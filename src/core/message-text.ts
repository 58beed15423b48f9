/** Reading message content the way upstream does. Pure. */

import type { AgentMessage, ContentPart, ToolCallPart } from "./session-types.js";

/** Text of a tool result / custom message: a string as is, else every text part joined by "\n". */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const texts: string[] = [];
  for (const part of content) if (isTextPart(part)) texts.push(part.text);
  return texts.length === 1 ? texts[0]! : texts.join("\n");
}

/** The string value contentText returns as it is (the content, or its only text part); undefined when it joins several or finds none. */
export function soleText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  let sole: string | undefined;
  for (const part of content) {
    if (!isTextPart(part)) continue;
    if (sole !== undefined) return undefined;
    sole = part.text;
  }
  return sole;
}

/** A content block that contentText reads. */
export function isTextPart(part: unknown): part is { type: "text"; text: string } {
  return isObjectLike(part) && (part as ContentPart).type === "text" && typeof (part as { text?: unknown }).text === "string";
}

function isObjectLike(value: unknown): boolean {
  return typeof value === "object" && value !== null;
}

const NO_CALLS: readonly ToolCallPart[] = Object.freeze([]);

/** The tool-call blocks of an assistant message (none for other roles or string content). */
export function toolCallParts(message: AgentMessage): readonly ToolCallPart[] {
  if (message.role !== "assistant" || !Array.isArray(message.content)) return NO_CALLS;
  // A loop, not filter(): every render walks every assistant message, and most hold one call.
  let calls: ToolCallPart[] | undefined;
  for (const part of message.content as unknown[]) if (isToolCallPart(part)) (calls ??= []).push(part);
  return calls ?? NO_CALLS;
}

/** A content block that is a tool call. */
export function isToolCallPart(part: unknown): part is ToolCallPart {
  return part !== null && typeof part === "object" && (part as ContentPart).type === "toolCall";
}

/** Arguments as chain detection's protection check reads them: `input ?? arguments`. */
export function detectionArgs(call: ToolCallPart): unknown {
  return call.input ?? call.arguments;
}

/** Arguments as record extraction reads them: `input ?? args ?? arguments ?? {}`. */
export function extractionArgs(call: ToolCallPart): unknown {
  return call.input ?? call.args ?? call.arguments ?? {};
}

/** A user message that is one of our own synthetic `<compressed-chain ...>` messages. */
export function isSyntheticChainMessage(message: AgentMessage): boolean {
  if (message.role !== "user") return false;
  const content = (message as { content?: unknown }).content;
  let text: unknown;
  if (typeof content === "string") text = content;
  else if (Array.isArray(content) && content[0]?.type === "text") text = content[0].text;
  return typeof text === "string" && text.trimStart().startsWith("<compressed-chain");
}

/** A message's numeric timestamp, or undefined. */
export function messageTimestamp(message: AgentMessage): number | undefined {
  return typeof message.timestamp === "number" ? message.timestamp : undefined;
}
