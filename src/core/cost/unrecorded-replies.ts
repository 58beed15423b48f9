/**
 * Assistant replies on a branch that record no `usage`: the replay engine takes requests only
 * from replies that carry usage (core/replay/recording.ts), so these are not in its figures.
 * `chainpress cost` counts them so its report says what it could not bill.
 */

import type { SessionEntry } from "../session-types.js";

export function unrecordedReplies(branch: readonly SessionEntry[]): number {
  let count = 0;
  for (const entry of branch) {
    if (entry.type !== "message") continue;
    const message = (entry as { message?: { role?: unknown; usage?: unknown } }).message;
    if (message?.role === "assistant" && (typeof message.usage !== "object" || message.usage === null)) count++;
  }
  return count;
}
