/**
 * Executes a ShardTask: read the range, split it on byte 0x0A, classify every line exactly as the
 * streaming reader does (io/session-line.ts), and lighten what was parsed. Long string values are
 * never decoded beyond their heads: they are parsed as refs into the shard's bytes
 * (core/literal-refs.ts), sized and cut from there.
 */

import { performance } from "node:perf_hooks";
import { loadHasher, type Hasher } from "../core/digest.js";
import { Lightener } from "../core/light-value.js";
import { refLineMinBytes, refOf, REF_LINE_MIN_BYTES, REF_OTHER_LINE_MIN_BYTES, type LiteralRef } from "../core/literal-refs.js";
import { soleText } from "../core/message-text.js";
import { holdsNonTextParts } from "../core/archived-parts.js";
import { LITERAL_CANONICAL, LITERAL_LONE_SURROGATE, type OutputLiteral } from "../io/output-literal.js";
import { RangeReader, withReadFd } from "../io/read-range.js";
import { isObject } from "../core/entry-shapes.js";
import { classifyLineWithRefs, type LineResult } from "../io/session-line.js";
import type { ScannedLine, ShardScan, ShardTask } from "./scan-task.js";

/** The scan of a shard; `ranges` is the thread's reader (workers/thread-scratch.ts), when it has one. */
export async function scanShard(task: ShardTask, ranges = new RangeReader()): Promise<ShardScan> {
  const lines: ScannedLine[] = [];
  return { lines, ...(await scanShardInto(task, (line) => lines.push(line), ranges)) };
}

/** The scan, each line handed to `take` as soon as it is scanned (a worker packs them as they come: parsed objects then die young). */
export async function scanShardInto(task: ShardTask, take: (line: ScannedLine) => void, ranges = new RangeReader()): Promise<Omit<ShardScan, "lines">> {
  const hasher = await loadHasher();
  const started = performance.now();
  // The shard's bytes are the reader's until its next read: every ref into them is used up here.
  const data = withReadFd(task.file, (fd) => ranges.read(fd, task.start, task.end - task.start, task.file));
  const lightener = new Lightener();
  let index = 0;
  for (let pos = 0; pos < data.length; index++) {
    const newline = data.indexOf(0x0a, pos);
    const stop = newline === -1 ? data.length : newline;
    if (stop - pos > task.maxLineBytes) return { lineCount: index + 1, tooLongAt: index, busyMs: performance.now() - started };
    const line = scanLine(data.subarray(pos, stop), task.start + pos, index, newline !== -1, hasher, lightener);
    if (line) take(line);
    pos = stop + 1;
  }
  return { lineCount: index, busyMs: performance.now() - started };
}

function scanLine(bytes: Buffer, byteOffset: number, index: number, terminated: boolean, hasher: Hasher, lightener: Lightener): ScannedLine | undefined {
  // The refs point into `bytes`, which the next read reuses: they are used up before this returns.
  const refs: LiteralRef[] = [];
  const result = classifyLineWithRefs(bytes, byteOffset === 0, refs, refLineMinBytes(mayBeToolResult(bytes)));
  if (result.kind === "blank" && terminated) return undefined;
  const line: ScannedLine = { index, byteOffset, bytes: bytes.length, terminated, result };
  // Before lightening, which replaces the refs.
  const output = result.kind === "value" ? outputLiteral(result.value, refs, bytes, hasher) : undefined;
  if (output) line.output = output;
  const values = valuesOf(result);
  if (values.length > 0) line.messageChars = values.map((value) => lightenValue(value, refs, lightener));
  return line;
}

/** How pi writes a tool result's role. Inside a JSON string its quotes would be escaped. */
const TOOL_RESULT_ROLE = Buffer.from('"role":"toolResult"');

/**
 * Whether the line may be a tool result's, whose lines are looked into for refs from a smaller size
 * (core/literal-refs.ts `refLineMinBytes`). Guessed from the bytes, and only where the two sizes
 * disagree: a wrong guess costs time, never a different result.
 */
function mayBeToolResult(bytes: Buffer): boolean {
  if (bytes.length < REF_LINE_MIN_BYTES || bytes.length >= REF_OTHER_LINE_MIN_BYTES) return true;
  return bytes.includes(TOOL_RESULT_ROLE);
}

/**
 * A tool result whose text is one ref: where it lies in the line, sized and digested. Only an
 * output of text alone: the chain task takes a located output as its literal and nothing else of
 * its line, so one with an image beside its text is read whole.
 */
function outputLiteral(entry: unknown, refs: readonly LiteralRef[], bytes: Buffer, hasher: Hasher): OutputLiteral | undefined {
  if (refs.length === 0 || !isObject(entry) || entry.type !== "message" || !isObject(entry.message) || entry.message.role !== "toolResult") return undefined;
  const { content } = entry.message;
  if (holdsNonTextParts(content)) return undefined;
  const text = soleText(content);
  const ref = text === undefined ? undefined : refOf(text, refs);
  if (ref === undefined) return undefined;
  const flags = (ref.canonical ? LITERAL_CANONICAL : 0) | (ref.loneSurrogate ? LITERAL_LONE_SURROGATE : 0);
  // In the literal's order (io/output-literal.ts).
  return [ref.start, ref.end - ref.start, ref.units, ref.jsonLength, ref.utf8Bytes, flags, hasher.hex64Bytes(bytes.subarray(ref.start, ref.end))];
}

function valuesOf(result: LineResult): unknown[] {
  if (result.kind === "value") return [result.value];
  if (result.kind === "joined") return result.values;
  return [];
}

/** Lightens an entry in place; returns its message's real JSON length for a message entry. */
function lightenValue(value: unknown, refs: readonly LiteralRef[], lightener: Lightener): number | undefined {
  if (!isObject(value)) return undefined;
  const message = value.type === "message" ? value.message : undefined;
  // The message first, sized while it is lightened; the rest of the entry is small by then.
  if (typeof message !== "object" || message === null) {
    lightener.lighten(value, refs);
    return undefined;
  }
  const chars = lightener.lighten(message, refs);
  lightener.lighten(value, refs, "message");
  // The entry's own ISO time: only other kinds of entry have theirs read (the messages pi derives
  // from them); a message carries its numeric timestamp. One string per entry, not kept.
  value.timestamp = undefined;
  return chars;
}
