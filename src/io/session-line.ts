/**
 * What one physical line of a session file holds, decided from its bytes alone: blank, one JSON
 * value, several entries glued together, or something unreadable. Shared by the streaming reader
 * (read-session.ts) and the parallel shard scan (workers/scan-shard.ts), so both apply exactly the
 * same decoding rules; what a result means for the session (header, truncated tail, error or
 * warning) is the session builder's decision, which needs the lines before it.
 */
import { isUtf8 } from "node:buffer";
import { isObject } from "../core/entry-shapes.js";
import { parseWithRefs, REF_LINE_MIN_BYTES, type LiteralRef } from "../core/literal-refs.js";

export type LineResult =
  | { kind: "blank" }
  /** Bytes that are not UTF-8 (or that V8 cannot turn into a string: `tooBig`). */
  | { kind: "undecodable"; tooBig: boolean; message: string }
  | { kind: "value"; value: unknown }
  /** Several complete objects written back to back (a lost newline). */
  | { kind: "joined"; values: Array<Record<string, unknown>> }
  /** Not JSON; `syntax` is false when JSON.parse failed for another reason (size). */
  | { kind: "unparsable"; syntax: boolean; message: string };

/**
 * Classifies a line (without its "\n"). A byte-order mark is dropped on the file's first line
 * only, as pi's trim() does before the header.
 */
export function classifyLine(bytes: Uint8Array, firstLineOfFile: boolean): LineResult {
  const text = decodeLine(bytes, firstLineOfFile);
  if (typeof text !== "string") return text;
  if (text.trim() === "") return { kind: "blank" };
  return parseLine(text);
}

/** Invalid bytes must fail, not become U+FFFD that a rewrite would then persist. */
function decodeLine(bytes: Uint8Array, firstLineOfFile: boolean): string | LineResult {
  let text: string;
  try {
    // isUtf8 plus toString is several times faster than a fatal TextDecoder on megabyte lines.
    if (!isUtf8(bytes)) return { kind: "undecodable", tooBig: false, message: "line is not valid UTF-8" };
    text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  } catch (error) {
    return { kind: "undecodable", tooBig: true, message: `cannot decode ${bytes.length} bytes: ${(error as Error).message}` };
  }
  return firstLineOfFile && text.startsWith("\uFEFF") ? text.slice(1) : text;
}

function parseLine(text: string): LineResult {
  try {
    return { kind: "value", value: JSON.parse(text) as unknown };
  } catch (error) {
    const values = splitJoinedEntries(text);
    if (values) return { kind: "joined", values };
    const syntax = error instanceof SyntaxError;
    return { kind: "unparsable", syntax, message: syntax ? `invalid JSON: ${error.message}` : `cannot parse ${text.length} characters` };
  }
}

/** Boundary between two entries that a writer put on one line. Inside a JSON string the quote would be escaped, so this cannot occur there. */
const JOINED_BOUNDARY = '}{"type":';

/** Every piece of a line holding several complete entries back to back; undefined unless each parses to an object. */
export function splitJoinedEntries(text: string): Array<Record<string, unknown>> | undefined {
  const pieces = joinedPieces(text);
  if (pieces === undefined) return undefined;
  try {
    const values = pieces.map((piece) => JSON.parse(piece) as unknown);
    return values.every(isObject) ? values : undefined;
  } catch {
    // Not a clean concatenation: the caller reports the line as malformed.
    return undefined;
  }
}

/** The line cut at every joined-entry boundary; undefined when it has none. */
export function joinedPieces(text: string): string[] | undefined {
  const pieces: string[] = [];
  let start = 0;
  for (let at = text.indexOf(JOINED_BOUNDARY); at !== -1; at = text.indexOf(JOINED_BOUNDARY, at + 1)) {
    pieces.push(text.slice(start, at + 1));
    start = at + 1;
  }
  if (pieces.length === 0) return undefined;
  pieces.push(text.slice(start));
  return pieces;
}

/**
 * classifyLine, with the long string values of an entry left in `bytes` as refs (appended to
 * `refs`, core/literal-refs.ts) when the line allows it and has at least `minBytes`; any other line
 * is classified in full, so the result (and every error's wording) is what classifyLine gives.
 */
export function classifyLineWithRefs(bytes: Buffer, firstLineOfFile: boolean, refs: LiteralRef[], minBytes = REF_LINE_MIN_BYTES): LineResult {
  // The file's first line may start with a byte-order mark, which only the full path drops.
  if (!firstLineOfFile && bytes.length >= minBytes && isUtf8(bytes)) {
    const parsed = parseWithRefs(bytes, refs);
    if (parsed) return { kind: "value", value: parsed.value };
  }
  return classifyLine(bytes, firstLineOfFile);
}
