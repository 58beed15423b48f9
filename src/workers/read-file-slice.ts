/**
 * The worker side of the file path: read a chain's lines from the session file, parse them, and
 * check that each is the entry the main thread planned from. Anything else (the file changed, a
 * line moved) fails the chain closed rather than archiving the wrong output. Long strings are
 * parsed as refs into the lines' bytes (core/literal-refs.ts), so tool outputs are never decoded.
 */

import type { AgentMessage } from "../core/session-types.js";
import type { Hasher } from "../core/digest.js";
import { markerFor, type LiteralRef } from "../core/literal-refs.js";
import { LITERAL_CANONICAL, LITERAL_LONE_SURROGATE } from "../io/session-builder.js";
import { readInto, withReadFd } from "../io/read-range.js";
import { isObject } from "../core/entry-shapes.js";
import { classifyLineWithRefs } from "../io/session-line.js";
import type { ExpectedLine, FileSlice } from "./chain-task.js";

/** Lines closer than this are read together, gap included: one read beats many small ones. */
const MERGE_GAP_BYTES = 64 * 1024;

/** The span's messages; their long strings become refs appended to `literals`, which point into buffers of their own. */
export function readFileSlice(slice: FileSlice, chainStart: number, literals: LiteralRef[], hasher: Hasher): AgentMessage[] {
  const messages: AgentMessage[] = [];
  withReadFd(slice.file, (fd) => {
    for (const run of readRuns(slice.lines)) {
      const first = run[0]!;
      const last = run[run.length - 1]!;
      // A buffer per run, not read-range's reused one: the refs outlive the next read.
      const data = readInto(fd, Buffer.allocUnsafeSlow(last.byteOffset + last.bytes - first.byteOffset), first.byteOffset, slice.file);
      for (const expected of run) {
        const at = expected.byteOffset - first.byteOffset;
        const bytes = data.subarray(at, at + expected.bytes);
        const message = expected.output ? locatedOutput(bytes, expected, expected.output, literals, hasher) : messageOf(bytes, expected, literals);
        if (!message) throw new Error(`chain ${chainStart}: ${slice.file}:${expected.line} is not the entry ${expected.id} the plan was made from (the file changed?)`);
        messages.push(message);
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

function messageOf(bytes: Buffer, expected: ExpectedLine, literals: LiteralRef[]): AgentMessage | undefined {
  const result = classifyLineWithRefs(bytes, expected.byteOffset === 0, literals);
  const entry = result.kind === "value" && isObject(result.value) ? result.value : undefined;
  const message = entry?.type === "message" && isObject(entry.message) ? entry.message : undefined;
  return entry && message && entry.id === expected.id && matches(message, expected) ? (message as AgentMessage) : undefined;
}

/**
 * A tool result whose text the scan located: the message is made from the plan's fields and a ref
 * to the literal, whose bytes must still be those the scan digested. Its line is not parsed.
 */
function locatedOutput(bytes: Buffer, expected: ExpectedLine, output: NonNullable<ExpectedLine["output"]>, literals: LiteralRef[], hasher: Hasher): AgentMessage | undefined {
  const [start, length, units, jsonLength, utf8Bytes, flags, digest] = output.literal;
  const end = start + length;
  if (end > bytes.length || hasher.hex64Bytes(bytes.subarray(start, end)) !== digest) return undefined;
  const canonical = (flags & LITERAL_CANONICAL) !== 0;
  const loneSurrogate = (flags & LITERAL_LONE_SURROGATE) !== 0;
  const content = markerFor(literals.push({ bytes, start, end, units, jsonLength, utf8Bytes, canonical, loneSurrogate }) - 1);
  return { role: "toolResult", toolCallId: expected.toolCallId, content, isError: output.isError, timestamp: expected.timestamp } as AgentMessage;
}

function matches(message: Record<string, unknown>, expected: ExpectedLine): boolean {
  return message.role === expected.role && sameScalar(message.timestamp, expected.timestamp) && sameScalar(message.toolCallId, expected.toolCallId);
}

/** Scalars must be equal; objects (odd files) are not compared, the id already matched. */
function sameScalar(a: unknown, b: unknown): boolean {
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) return true;
  return Object.is(a, b);
}
