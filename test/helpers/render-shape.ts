/**
 * A message of `chainpress render` reduced as test/helpers/pi-loader-child.mjs reduces pi's own
 * context: its role, a tool result's `toolCallId`, an assistant's tool-call ids (an empty list
 * when it made none) and its text (the text parts joined with nothing between them; a
 * compaction or branch summary's `summary`). Comparing these with `piContexts(...)` asks "does
 * chainpress send what pi's loader builds?".
 */

import type { PiContextMessage } from "./pi-loader.js";

/** A rendered message reduced as the loader helper reduces pi's. */
export function reduceRendered(message: Record<string, unknown>): PiContextMessage {
  const out: PiContextMessage = { role: String(message.role), text: "" };
  const content = message.content;
  if (message.role === "toolResult") out.toolCallId = message.toolCallId as string;
  if (message.role === "assistant") out.toolCallIds = Array.isArray(content) ? content.filter((p) => p?.type === "toolCall").map((p) => p.id as string) : [];
  out.text = content !== undefined ? textOf(content) : typeof message.summary === "string" ? message.summary : "";
  return out;
}

/** The text parts of a content (a string as is), joined with nothing between them. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((p) => p?.type === "text" && typeof p.text === "string").map((p) => p.text as string).join("");
}

/** The JSON lines `chainpress render <session>` prints, parsed. */
export function renderLines(stdout: string): Array<Record<string, unknown>> {
  return stdout.split("\n").filter((line) => line.length > 0).map((line) => JSON.parse(line) as Record<string, unknown>);
}
