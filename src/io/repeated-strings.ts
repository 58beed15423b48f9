/**
 * One copy of the strings that repeat from entry to entry. JSON.parse gives every value a string
 * of its own (it shares only the shortest), so a parsed session holds the same model name on
 * every assistant message, each entry's parent id twice (its parent has it as `id`), each tool
 * call's id twice (its result names it), and the same file paths over and over, a sizeable share
 * of the main thread's heap. The values are the same; only their copies go.
 */

import { isObject } from "../core/entry-shapes.js";

/** Message fields whose few values repeat on every message. */
const SHARED_MESSAGE_KEYS = ["model", "api", "provider", "toolName"] as const;
/** A session names few models, tools and paths; past this many values, new ones are left as they are. */
const MAX_SHARED = 4096;
/** Calls of one message remembered for their results: a result looks through them one by one. */
const MAX_RECENT_CALLS = 256;

export class RepeatedStrings {
  private readonly values = new Map<string, string>();
  /**
   * The call ids of the latest assistant message that made calls: pi writes a call's result
   * before the next assistant message, so a result finds its call here (one that does not keeps
   * its own copy). An array reused in place, not a map of open calls: a long-lived map that
   * gains and loses an entry per call reallocates its table in the old generation each time.
   */
  private readonly recentCalls: string[] = [];

  /** Points `entry`'s repeated strings at their first copies; `previous` is the entry before it in the file. */
  share(entry: Record<string, unknown>, previous: Record<string, unknown> | undefined): void {
    if (previous !== undefined && typeof entry.parentId === "string" && entry.parentId === previous.id) entry.parentId = previous.id;
    const message = entry.message;
    if (!isObject(message)) return;
    for (const key of SHARED_MESSAGE_KEYS) {
      const text = message[key];
      if (typeof text === "string") message[key] = this.shared(text);
    }
    if (message.role === "assistant" && Array.isArray(message.content)) this.shareCalls(message.content);
    else if (message.role === "toolResult" && typeof message.toolCallId === "string") this.shareResultId(message);
  }

  private shareCalls(content: unknown[]): void {
    let reset = false;
    for (const part of content) {
      if (!isObject(part) || part.type !== "toolCall") continue;
      // This message's calls replace the last ones; a message without calls leaves them.
      if (!reset) {
        this.recentCalls.length = 0;
        reset = true;
      }
      if (typeof part.id === "string" && this.recentCalls.length < MAX_RECENT_CALLS) this.recentCalls.push(part.id);
      const args = part.arguments;
      if (isObject(args) && typeof args.path === "string") args.path = this.shared(args.path);
    }
  }

  private shareResultId(message: Record<string, unknown>): void {
    const id = message.toolCallId as string;
    const calls = this.recentCalls;
    for (let i = 0; i < calls.length; i++) {
      if (calls[i] !== id) continue;
      message.toolCallId = calls[i];
      return;
    }
  }

  private shared(text: string): string {
    const known = this.values.get(text);
    if (known !== undefined) return known;
    if (this.values.size < MAX_SHARED) this.values.set(text, text);
    return text;
  }
}
