// Small factories for agent messages and session entries, shaped the way pi writes them
// (UPSTREAM-FORMAT.md §0): user / assistant / toolResult messages with numeric epoch-ms
// timestamps, toolCall blocks carrying `arguments`, and `custom` / `custom_message` entries.
import type {
  AgentMessage,
  AssistantMessage,
  ContentPart,
  SessionEntry,
  ToolResultMessage,
  UserMessage,
} from "../../src/core/session-types.js";

export interface CallSpec {
  id: string;
  name: string;
  args?: unknown;
}

/** A real user message with one text part. */
export function user(text: string, timestamp: number): UserMessage {
  return { role: "user", content: [{ type: "text", text }], timestamp };
}

/** A user message whose content is a plain string. */
export function userString(text: string, timestamp: number): UserMessage {
  return { role: "user", content: text, timestamp };
}

/** A pi toolCall block: args under `arguments` (what pi writes). */
export function toolCallBlock(id: string, name: string, args?: unknown): ContentPart {
  return args === undefined ? { type: "toolCall", id, name } : { type: "toolCall", id, name, arguments: args };
}

/** An assistant message that issues tool calls (optionally preceded by extra blocks, e.g. thinking). */
export function assistantCalls(calls: CallSpec[], timestamp: number, leading: ContentPart[] = []): AssistantMessage {
  return {
    role: "assistant",
    content: [...leading, ...calls.map((c) => toolCallBlock(c.id, c.name, c.args))],
    timestamp,
  };
}

/** An assistant message built from raw content blocks. */
export function assistantBlocks(content: ContentPart[], timestamp: number): AssistantMessage {
  return { role: "assistant", content, timestamp };
}

/** A text-only assistant reply (closes a chain); optional thinking blocks first. */
export function assistantText(text: string, timestamp: number, thinkingTexts: string[] = []): AssistantMessage {
  return {
    role: "assistant",
    content: [...thinkingTexts.map(thinking), { type: "text", text }],
    timestamp,
  };
}

export function thinking(text: string): ContentPart {
  return { type: "thinking", thinking: text };
}

export function textPart(text: string): ContentPart {
  return { type: "text", text };
}

/** A toolResult message with one text part (or several when `text` is an array). */
export function toolResult(
  toolCallId: string,
  toolName: string,
  text: string | string[],
  timestamp: number,
  isError = false,
): ToolResultMessage {
  const texts = Array.isArray(text) ? text : [text];
  return {
    role: "toolResult",
    toolCallId,
    toolName,
    content: texts.map((t) => ({ type: "text", text: t })),
    isError,
    timestamp,
  };
}

/** One of our own synthetic `<compressed-chain ...>` user messages. */
export function syntheticChain(blockId: string, timestamp: number, prefix = ""): UserMessage {
  return {
    role: "user",
    content: [{ type: "text", text: `${prefix}<compressed-chain id="${blockId}" tools="">\nbody\n</compressed-chain>` }],
    timestamp,
  };
}

/**
 * A closed chain: user at `start`, then for each call an assistant call message and its result
 * (timestamps start+1, start+2, ...), then a text-only assistant. Returns the messages.
 */
export function closedChain(start: number, calls: Array<{ id: string; name?: string; text?: string }>): AgentMessage[] {
  const out: AgentMessage[] = [user(`q${start}`, start)];
  let ts = start;
  for (const c of calls) {
    const name = c.name ?? "bash";
    out.push(assistantCalls([{ id: c.id, name, args: { command: c.id } }], ++ts));
    out.push(toolResult(c.id, name, c.text ?? `out ${c.id}`, ++ts));
  }
  out.push(assistantText(`done ${start}`, ++ts));
  return out;
}

let entryCounter = 0;

function entryBase(id?: string) {
  entryCounter++;
  return {
    id: id ?? `e${entryCounter.toString(16).padStart(7, "0")}`,
    parentId: null,
    timestamp: "2026-08-14T10:00:00.000Z",
  };
}

/** A `custom` session entry (index, chain, dedup-alias, ...). Pass `data: undefined` to omit it. */
export function customEntry(customType: string, data: unknown, id?: string): SessionEntry {
  const entry: Record<string, unknown> = { type: "custom", customType };
  if (data !== undefined) entry.data = data;
  return { ...entry, ...entryBase(id) } as SessionEntry;
}

/** A `custom_message` session entry (the per-batch summary). */
export function customMessageEntry(customType: string, content: unknown, details: unknown, id?: string): SessionEntry {
  return { type: "custom_message", customType, content, display: false, details, ...entryBase(id) } as SessionEntry;
}

/** A `message` session entry. */
export function messageEntry(message: AgentMessage, id?: string): SessionEntry {
  return { type: "message", message, ...entryBase(id) } as SessionEntry;
}
