/**
 * Turns a planned span (message objects of a lightened model) into the lines of the session file a
 * worker reads to get the real messages (workers/read-file-slice.ts), with what the plan knows of
 * each: enough for a tool result whose text the scan located to be taken without parsing its line.
 */

import type { AgentMessage } from "../core/session-types.js";
import type { ExpectedLine, FileSlice } from "../workers/chain-task.js";
import type { SessionModel } from "./session-model.js";

export function fileSliceOf(model: SessionModel, inner: readonly AgentMessage[]): FileSlice {
  const lines = inner.map((message): ExpectedLine => {
    const entry = model.entryOf(message);
    const place = entry && model.loaded.locationOf(entry);
    if (!entry || !place) throw new Error("a message of the span has no line in the session file");
    const line: ExpectedLine = { byteOffset: place.byteOffset, bytes: place.bytes, line: place.line, id: entry.id, role: message.role, timestamp: message.timestamp };
    const toolCallId = (message as { toolCallId?: unknown }).toolCallId;
    if (toolCallId !== undefined) line.toolCallId = toolCallId;
    if (place.output !== undefined) line.output = { literal: place.output, isError: (message as { isError?: unknown }).isError === true };
    return line;
  });
  return { file: model.loaded.file, lines };
}
