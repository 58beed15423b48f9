/**
 * The worker side of the file path: read a chain's lines from the session file, parse them, and
 * check that each is the entry the main thread planned from. Anything else (the file changed, a
 * line moved) fails the chain closed rather than archiving the wrong output.
 */

import type { AgentMessage } from "../core/session-types.js";
import { readRange, withReadFd } from "../io/read-range.js";
import { isObject } from "../core/entry-shapes.js";
import { classifyLine } from "../io/session-line.js";
import type { ExpectedLine, FileSlice } from "./chain-task.js";

/** Lines closer than this are read together, gap included: one read beats many small ones. */
const MERGE_GAP_BYTES = 64 * 1024;

export function readFileSlice(slice: FileSlice, chainStart: number): AgentMessage[] {
  const messages: AgentMessage[] = [];
  withReadFd(slice.file, (fd) => {
    for (const run of readRuns(slice.lines)) {
      const first = run[0]!;
      const last = run[run.length - 1]!;
      const data = readRange(fd, first.byteOffset, last.byteOffset + last.bytes - first.byteOffset, slice.file);
      for (const expected of run) {
        const at = expected.byteOffset - first.byteOffset;
        messages.push(messageOf(data.subarray(at, at + expected.bytes), expected, slice.file, chainStart));
      }
    }
  });
  return messages;
}

/** Consecutive expected lines grouped into runs that are read with one call. */
function* readRuns(lines: readonly ExpectedLine[]): Generator<ExpectedLine[]> {
  let run: ExpectedLine[] = [];
  for (const line of lines) {
    const previous = run[run.length - 1];
    if (previous && line.byteOffset >= previous.byteOffset + previous.bytes && line.byteOffset - (previous.byteOffset + previous.bytes) <= MERGE_GAP_BYTES) {
      run.push(line);
      continue;
    }
    if (run.length > 0) yield run;
    run = [line];
  }
  if (run.length > 0) yield run;
}

function messageOf(bytes: Uint8Array, expected: ExpectedLine, file: string, chainStart: number): AgentMessage {
  const result = classifyLine(bytes, expected.byteOffset === 0);
  const entry = result.kind === "value" && isObject(result.value) ? result.value : undefined;
  const message = entry?.type === "message" && isObject(entry.message) ? entry.message : undefined;
  if (!entry || !message || entry.id !== expected.id || !matches(message, expected)) {
    throw new Error(`chain ${chainStart}: ${file}:${expected.line} is not the entry ${expected.id} the plan was made from (the file changed?)`);
  }
  return message as AgentMessage;
}

function matches(message: Record<string, unknown>, expected: ExpectedLine): boolean {
  return message.role === expected.role && sameScalar(message.timestamp, expected.timestamp) && sameScalar(message.toolCallId, expected.toolCallId);
}

/** Scalars must be equal; objects (odd files) are not compared, the id already matched. */
function sameScalar(a: unknown, b: unknown): boolean {
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) return true;
  return Object.is(a, b);
}
