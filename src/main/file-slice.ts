/**
 * Turns a planned span into the lines of the session file a worker reads to get the real messages
 * (workers/read-file-slice.ts), with what the plan knows of each: the message's id, role,
 * timestamp and tool call, which the worker checks the line against, and, from a scan, enough for
 * a tool result whose text the scan located to be taken without parsing its line.
 */

import type { AgentMessage } from "../core/session-types.js";
import type { EntryLines } from "../io/entry-lines.js";
import type { EntryLocation } from "../io/loaded-session.js";
import type { FileSlice } from "../workers/chain-task.js";
import { FileSliceWriter } from "../workers/file-slice-columns.js";
import type { DeterministicPlan } from "./plan-chains.js";
import type { SessionModel } from "./session-model.js";

type Span = Pick<DeterministicPlan, "inner" | "innerStart">;

/** The lines of a plan's span from a lightened model: `inner`, a slice of the model's messages from `innerStart` on. */
export function fileSliceOf(model: SessionModel, { inner, innerStart }: Span): FileSlice {
  const slice = new FileSliceWriter(model.loaded.file, inner.length);
  for (let k = 0; k < inner.length; k++) {
    const message = inner[k]!;
    // By index (a lookup per message cost more than the rest of the slice): planned from the
    // model's messages, the span is a slice of them; planned from another array, it is looked up.
    const byIndex = model.messages[innerStart + k] === message;
    const entry = byIndex ? model.messageEntry(innerStart + k) : model.entryOf(message);
    const location = byIndex ? model.messageLocation(innerStart + k) : model.locationOf(message);
    if (!entry || !location) throw new Error("a message of the span has no line in the session file");
    addLine(slice, location, entry.id, message);
  }
  return slice.slice();
}

/**
 * The lines of a plan's span from messages held in memory (pi's), planned from `messages`, whose
 * message i is entry `entryIdOf(i)`'s; undefined unless every message of the span has a line.
 */
export function fileSliceFromLines(lines: EntryLines, messages: readonly AgentMessage[], entryIdOf: (index: number) => string | undefined, { inner, innerStart }: Span): FileSlice | undefined {
  const slice = new FileSliceWriter(lines.file, inner.length);
  for (let k = 0; k < inner.length; k++) {
    const message = inner[k]!;
    const id = messages[innerStart + k] === message ? entryIdOf(innerStart + k) : undefined;
    const location = id === undefined ? undefined : lines.locationOf(id);
    if (id === undefined || location === undefined) return undefined;
    addLine(slice, location, id, message);
  }
  return slice.slice();
}

function addLine(slice: FileSliceWriter, location: EntryLocation, id: string, message: AgentMessage): void {
  const { toolCallId, isError } = message as { toolCallId?: unknown; isError?: unknown };
  slice.add(location, id, message.role, message.timestamp, toolCallId, isError === true);
}
