/**
 * Where the `spillPath` values of a `context-prune-index` line sit in its bytes: the string
 * literals at `data.toolCalls[i].spillPath` and `data.toolCalls[i].parts[j].spillPath` (a spilled
 * content part, core/archived-parts.ts), so a copy of the line can name other spill files
 * while every other byte stays as it was. The scan is a loop with an explicit stack (no
 * recursion, whatever the nesting) and never decodes a value it does not need.
 */

/** One `spillPath` literal: `[start, end)` byte offsets, quotes included, of record `record` (of its part `part`, for a part's). */
export interface SpillPathSpan {
  readonly record: number;
  readonly part?: number;
  readonly start: number;
  readonly end: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

interface Frame {
  readonly isObject: boolean;
  /** This container is the root, `data`, `data.toolCalls`, one of its records, a record's `parts` or one of them. */
  readonly onPath: boolean;
  /** An object's next string is a key. */
  awaitingKey: boolean;
  /** The current key of an object on the path (undefined elsewhere). */
  key: string | undefined;
  /** An array's current element (its commas so far). */
  index: number;
}

/** The key that leads from the container at each depth (root = 0) towards a record's `spillPath`. */
const PATH_KEYS = ["data", "toolCalls"] as const;

/**
 * The `spillPath` literals of the records of one JSON text. The text must be valid JSON (the
 * caller parsed it); duplicate keys are all reported, so the caller compares each literal with
 * the value JSON.parse kept.
 */
export function spillPathSpans(bytes: Uint8Array): SpillPathSpan[] {
  const spans: SpillPathSpan[] = [];
  const stack: Frame[] = [];
  let at = 0;
  while (at < bytes.length) {
    const byte = bytes[at]!;
    if (byte === QUOTE) {
      const end = stringEnd(bytes, at);
      const top = stack[stack.length - 1];
      if (top?.isObject === true && top.awaitingKey) {
        top.key = top.onPath ? decodeString(bytes, at, end) : undefined;
        top.awaitingKey = false;
      } else if (top !== undefined) {
        const depth = spillPathDepth(stack, top);
        if (depth === RECORD_DEPTH) spans.push({ record: stack[RECORD_DEPTH - 2]!.index, start: at, end });
        else if (depth === PART_DEPTH) spans.push({ record: stack[RECORD_DEPTH - 2]!.index, part: stack[PART_DEPTH - 2]!.index, start: at, end });
      }
      at = end;
      continue;
    }
    if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      stack.push(newFrame(stack, byte === OPEN_OBJECT));
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      stack.pop();
    } else if (byte === COMMA) {
      const top = stack[stack.length - 1];
      if (top?.isObject === true) top.awaitingKey = true;
      else if (top !== undefined) top.index++;
    }
    at++;
  }
  return spans;
}

/** `bytes` with each span replaced by its literal (spans in ascending order, not overlapping). */
export function replaceSpans(bytes: Uint8Array, replacements: ReadonlyArray<{ span: SpillPathSpan; literal: Uint8Array }>): Uint8Array {
  const parts: Uint8Array[] = [];
  let from = 0;
  for (const { span, literal } of replacements) {
    parts.push(bytes.subarray(from, span.start), literal);
    from = span.end;
  }
  parts.push(bytes.subarray(from));
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function newFrame(stack: readonly Frame[], isObject: boolean): Frame {
  const depth = stack.length;
  const parent = stack[depth - 1];
  let onPath: boolean;
  if (parent === undefined) onPath = isObject;
  else if (!parent.onPath) onPath = false;
  else if (depth <= PATH_KEYS.length) onPath = parent.key === PATH_KEYS[depth - 1] && (depth === PATH_KEYS.length ? !isObject : isObject);
  else if (depth === RECORD_DEPTH - 1) onPath = isObject; // a record
  else if (depth === RECORD_DEPTH) onPath = parent.key === "parts" && !isObject; // its parts
  else onPath = depth === PART_DEPTH - 1 && isObject; // one of them
  return { isObject, onPath, awaitingKey: isObject, key: undefined, index: 0 };
}

/** Stack depths of a string directly in a record, and directly in one of its parts. */
const RECORD_DEPTH = PATH_KEYS.length + 2;
const PART_DEPTH = RECORD_DEPTH + 2;

/** The depth of a `spillPath` value on the path (RECORD_DEPTH or PART_DEPTH), else undefined. */
function spillPathDepth(stack: readonly Frame[], top: Frame): number | undefined {
  if (!top.onPath || !top.isObject || top.key !== "spillPath") return undefined;
  return stack.length === RECORD_DEPTH || stack.length === PART_DEPTH ? stack.length : undefined;
}

/** The offset just past the closing quote of the string literal opening at `start`. */
function stringEnd(bytes: Uint8Array, start: number): number {
  let at = start + 1;
  for (;;) {
    const quote = bytes.indexOf(QUOTE, at);
    if (quote === -1) throw new Error(`unterminated string literal at byte ${start}`);
    let backslashes = 0;
    while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}

const decoder = new TextDecoder();

function decodeString(bytes: Uint8Array, start: number, end: number): string {
  return JSON.parse(decoder.decode(bytes.subarray(start, end))) as string;
}

/** A spill file name as chainpress and pi-condense write them: one plain name, nothing that climbs. */
export function isPlainSpillFileName(name: string): boolean {
  return /^[A-Za-z0-9_.-]+$/.test(name) && name !== "." && name !== "..";
}
