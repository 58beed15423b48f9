/**
 * The entry types pi writes (0.73.1 and 1.6): anything else is a kind chainpress does not know.
 * Such entries are kept and passed over, as pi's loader passes them over, but said once per kind,
 * so that a new pi entry kind is noticed rather than silently misread.
 */

import type { SessionEntry } from "./session-types.js";
import { runSteps, stepDue, type Steps } from "./steps.js";

export const KNOWN_ENTRY_TYPES: ReadonlySet<string> = new Set([
  "session",
  "message",
  "thinking_level_change",
  "model_change",
  "compaction",
  "branch_summary",
  "custom",
  "custom_message",
  "label",
  "session_info",
  // pi 1.6
  "context_edit",
  "usage",
]);

/** One kind chainpress does not know: how many entries have it, and the first of them. */
export interface UnknownEntryKind {
  type: string;
  count: number;
  firstIndex: number;
}

/** The unknown kinds among `entries`, in order of first appearance. */
export function unknownEntryKinds(entries: readonly SessionEntry[]): UnknownEntryKind[] {
  return runSteps(unknownEntryKindsSteps(entries));
}

/** unknownEntryKinds, pausable (core/steps.ts). */
export function* unknownEntryKindsSteps(entries: readonly SessionEntry[]): Steps<UnknownEntryKind[]> {
  const kinds = new Map<string, UnknownEntryKind>();
  for (let index = 0; index < entries.length; index++) {
    if (stepDue(index)) yield;
    const type = entries[index]!.type;
    if (KNOWN_ENTRY_TYPES.has(type)) continue;
    const kind = kinds.get(type);
    if (kind) kind.count++;
    else kinds.set(type, { type, count: 1, firstIndex: index });
  }
  return [...kinds.values()];
}

/** The warning for one unknown kind, the same words on the CLI and in `/pruner status`. */
export function describeUnknownKind(kind: Pick<UnknownEntryKind, "type" | "count">): string {
  const entries = kind.count === 1 ? "1 entry" : `${kind.count} entries`;
  return `${entries} of unknown type ${JSON.stringify(kind.type)} passed over (chainpress may be older than the pi that wrote them)`;
}
