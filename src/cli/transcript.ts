/**
 * A readable transcript of rendered messages (`chainpress render --text`): one block per
 * message with its role and time, text as is, tool calls as `→ name args`, other parts
 * (images, thinking) as short placeholders so the reader knows they are there.
 */

import { contentText } from "../core/message-text.js";
import type { AgentMessage, ContentPart } from "../core/session-types.js";
import { jsonText } from "../core/json-text.js";

export function transcriptBlock(message: AgentMessage): string {
  return `${heading(message)}\n${body(message)}`.trimEnd();
}

function heading(message: AgentMessage): string {
  const time = typeof message.timestamp === "number" && Number.isFinite(message.timestamp) ? ` · ${new Date(message.timestamp).toISOString()}` : "";
  const m = message as Record<string, unknown>;
  let detail = "";
  if (message.role === "toolResult") detail = ` ${String(m.toolName)} [${String(m.toolCallId)}]${m.isError === true ? " (error)" : ""}`;
  else if (message.role === "custom") detail = ` ${String(m.customType)}`;
  return `── ${message.role}${detail}${time} ──`;
}

function body(message: AgentMessage): string {
  const m = message as Record<string, unknown>;
  // Summaries of pi's own compaction and branch navigation carry their text in `summary`.
  if (typeof m.summary === "string") return m.summary;
  const content = m.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return contentText(content);
  return (content as ContentPart[]).map(partText).filter((text) => text.length > 0).join("\n");
}

function partText(part: ContentPart): string {
  if (part === null || typeof part !== "object") return "";
  const p = part as Record<string, unknown>;
  switch (part.type) {
    case "text":
      return typeof p.text === "string" ? p.text : "";
    case "toolCall":
      return `→ ${String(p.name)} ${jsonText(p.arguments ?? p.input ?? p.args ?? {})} [${String(p.id)}]`;
    case "thinking":
      return typeof p.thinking === "string" && p.thinking.length > 0 ? `(thinking, ${p.thinking.length} chars)` : "";
    case "image":
      return `[image${typeof p.mimeType === "string" ? ` ${p.mimeType}` : ""}]`;
    default:
      return `[${String(part.type)} part]`;
  }
}
