/**
 * Turns a planned span (message objects of a lightened model) into the lines of the session file a
 * worker reads to get the real messages (workers/read-file-slice.ts), with what the plan knows of
 * each: enough for a tool result whose text the scan located to be taken without parsing its line.
 */

import type { FileSlice } from "../workers/chain-task.js";
import { FileSliceWriter } from "../workers/file-slice-columns.js";
import type { DeterministicPlan } from "./plan-chains.js";
import type { SessionModel } from "./session-model.js";

/** The lines of a plan's span: `inner`, a slice of the model's messages from `innerStart` on. */
export function fileSliceOf(model: SessionModel, { inner, innerStart }: Pick<DeterministicPlan, "inner" | "innerStart">): FileSlice {
  const slice = new FileSliceWriter(model.loaded.file, inner.length);
  for (let k = 0; k < inner.length; k++) {
    const message = inner[k]!;
    // By index (a lookup per message cost more than the rest of the slice): planned from the
    // model's messages, the span is a slice of them; planned from another array, it is looked up.
    const byIndex = model.messages[innerStart + k] === message;
    const entry = byIndex ? model.messageEntry(innerStart + k) : model.entryOf(message);
    const place = byIndex ? model.messageLocation(innerStart + k) : model.locationOf(message);
    if (!entry || !place) throw new Error("a message of the span has no line in the session file");
    const { toolCallId, isError } = message as { toolCallId?: unknown; isError?: unknown };
    slice.add(place, entry.id, message.role, message.timestamp, toolCallId, isError === true);
  }
  return slice.slice();
}
