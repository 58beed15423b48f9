/**
 * The worker side of the file path: read a chain's lines from the session file, parse them, and
 * check that each is the entry the main thread planned from. Anything else (the file changed, a
 * line moved) fails the chain closed rather than archiving the wrong output. Long strings are
 * parsed as refs into the lines' bytes (core/literal-refs.ts), so tool outputs are never decoded;
 * unless a line parsed in full (or the blob folder's path, which records name) mentions U+E002,
 * the marker's first character: then no line gets refs, so no text of the chain can pass for a
 * marker.
 */

import type { AgentMessage } from "../core/session-types.js";
import type { Hasher } from "../core/digest.js";
import { markerFor, mentionsMarker, refLineMinBytes, type LiteralRef } from "../core/literal-refs.js";
import { LITERAL_BYTES, LITERAL_CANONICAL, LITERAL_DIGEST, LITERAL_FLAGS, LITERAL_JSON_LENGTH, LITERAL_LONE_SURROGATE, LITERAL_OFFSET, LITERAL_UNITS, LITERAL_UTF8_BYTES } from "../io/output-literal.js";
import { readInto, withReadFd } from "../io/read-range.js";
import { isObject } from "../core/entry-shapes.js";
import { classifyLine, classifyLineWithRefs } from "../io/session-line.js";
import { lineChangedMessage, unreadableLinesMessage, type ExpectedLine, type FileSlice } from "./chain-task.js";
import { expectedLines } from "./file-slice-columns.js";

/** Lines closer than this are read together, gap included: one read beats many small ones. */
const MERGE_GAP_BYTES = 64 * 1024;

/**
 * The span's messages. With `refsAllowed`, their long strings become refs appended to `literals`
 * (which point into the lines' bytes), unless a line parsed in full mentions U+E002: then the
 * span is parsed again, every line in full, and `literals` is left empty. The bytes are read into
 * one buffer that `room` provides, which the caller must keep until it is done with the refs.
 */
export function readFileSlice(slice: FileSlice, chainStart: number, literals: LiteralRef[], hasher: Hasher, refsAllowed: boolean, room: (bytes: number) => Buffer): AgentMessage[] {
  const runs = readLines(slice, chainStart, room);
  if (refsAllowed) {
    const withRefs = messagesOf(runs, slice, chainStart, literals, hasher);
    // A line parsed with refs was checked by parseWithRefs, a located output's line by the scan;
    // a line parsed in full was not, and its text would sit next to markers.
    if (!withRefs.fullyParsed.some(mentionsMarker)) return withRefs.messages;
    literals.length = 0;
  }
  return messagesOf(runs, slice, chainStart, undefined, hasher).messages;
}

function readLines(slice: FileSlice, chainStart: number, room: (bytes: number) => Buffer): ReadRun[] {
  const runs = [...readRuns(expectedLines(slice))];
  try {
    return withReadFd(slice.file, (fd) => readAllRuns(fd, runs, slice.file, room));
  } catch (error) {
    throw new Error(unreadableLinesMessage(chainStart, slice.file, error instanceof Error ? error.message : String(error)));
  }
}

interface ReadRun {
  lines: ExpectedLine[];
  data: Buffer;
}

function messagesOf(runs: readonly ReadRun[], slice: FileSlice, chainStart: number, refs: LiteralRef[] | undefined, hasher: Hasher): { messages: AgentMessage[]; fullyParsed: Buffer[] } {
  const messages: AgentMessage[] = [];
  const fullyParsed: Buffer[] = [];
  for (const { lines, data } of runs) {
    for (const expected of lines) {
      const at = expected.byteOffset - lines[0]!.byteOffset;
      const bytes = data.subarray(at, at + expected.bytes);
      const taken = refs?.length ?? 0;
      const message = expected.output && refs ? locatedOutput(bytes, expected, expected.output, refs, hasher) : messageOf(bytes, expected, refs);
      if (!message) throw new Error(lineChangedMessage(chainStart, slice.file, expected.line, expected.id));
      if (refs && refs.length === taken) fullyParsed.push(bytes);
      messages.push(message);
    }
  }
  return { messages, fullyParsed };
}

/** Every run's bytes, one after the other in one buffer (the refs into each stay valid together). */
function readAllRuns(fd: number, runs: ReadonlyArray<ExpectedLine[]>, file: string, room: (bytes: number) => Buffer): ReadRun[] {
  const total = runs.reduce((sum, lines) => sum + runBytes(lines), 0);
  const buffer = room(total);
  let at = 0;
  return runs.map((lines) => {
    const data = readInto(fd, buffer.subarray(at, at + runBytes(lines)), lines[0]!.byteOffset, file);
    at += data.length;
    return { lines, data };
  });
}

function runBytes(lines: readonly ExpectedLine[]): number {
  const last = lines[lines.length - 1]!;
  return last.byteOffset + last.bytes - lines[0]!.byteOffset;
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

function messageOf(bytes: Buffer, expected: ExpectedLine, refs: LiteralRef[] | undefined): AgentMessage | undefined {
  const result = refs ? classifyLineWithRefs(bytes, expected.byteOffset === 0, refs, refLineMinBytes(expected.role === "toolResult")) : classifyLine(bytes, expected.byteOffset === 0);
  const entry = result.kind === "value" && isObject(result.value) ? result.value : undefined;
  const message = entry?.type === "message" && isObject(entry.message) ? entry.message : undefined;
  return entry && message && entry.id === expected.id && matches(message, expected) ? (message as AgentMessage) : undefined;
}

/**
 * A tool result whose text the scan located: the message is made from the plan's fields and a ref
 * to the literal, whose bytes must still be those the scan digested. Its line is not parsed.
 */
function locatedOutput(bytes: Buffer, expected: ExpectedLine, output: NonNullable<ExpectedLine["output"]>, literals: LiteralRef[], hasher: Hasher): AgentMessage | undefined {
  const { literal } = output;
  const start = literal[LITERAL_OFFSET];
  const end = start + literal[LITERAL_BYTES];
  if (end > bytes.length || hasher.hex64Bytes(bytes.subarray(start, end)) !== literal[LITERAL_DIGEST]) return undefined;
  const flags = literal[LITERAL_FLAGS];
  const canonical = (flags & LITERAL_CANONICAL) !== 0;
  const loneSurrogate = (flags & LITERAL_LONE_SURROGATE) !== 0;
  const content = markerFor(literals.push({ bytes, start, end, units: literal[LITERAL_UNITS], jsonLength: literal[LITERAL_JSON_LENGTH], utf8Bytes: literal[LITERAL_UTF8_BYTES], canonical, loneSurrogate }) - 1);
  return { role: "toolResult", toolCallId: expected.toolCallId, content, isError: output.isError, timestamp: expected.timestamp } as AgentMessage;
}

function matches(message: Record<string, unknown>, expected: ExpectedLine): boolean {
  return message.role === expected.role && sameScalar(message.timestamp, expected.timestamp) && sameScalar(message.toolCallId, expected.toolCallId);
}

/**
 * Scalars must be equal; objects (odd files) are not compared, the id already matched. `===`, not
 * Object.is: the plan's copy of a -0 came through the scan's JSON hand-off as 0, and nothing
 * written tells them apart (JSON and String() both write 0).
 */
function sameScalar(a: unknown, b: unknown): boolean {
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) return true;
  return a === b;
}
