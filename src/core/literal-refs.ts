/**
 * Session lines parsed without decoding their long strings. A tool output is a JSON string literal
 * of up to megabytes inside a line, and decoding it (UTF-8 to UTF-16) and parsing it cost more than
 * everything else a compaction does with it: measure it, keep a short head of it, and copy it into
 * an index entry, where it is a JSON string again (the same bytes when the line is canonical JSON,
 * as pi writes it). So each long value literal of a line is validated and sized in place
 * (core/json-literal.ts), the rest of the line is parsed with a marker string where the literal
 * was, and the literal's bytes stay in the line's buffer, named by the marker.
 *
 * A marker is "\uE002<n>\uE003", n indexing the caller's list of refs. A line whose parsed part
 * (everything but the refs) holds U+E002 in any spelling, raw or escaped, is not parsed this way,
 * so no string of the parsed value holds one but a marker. (A ref's own text may: it is never
 * parsed, and a resolved or expanded ref is never searched for markers again.) A caller that puts
 * strings from elsewhere (another line parsed in full, a path) next to markers must first make
 * sure none of them mentions U+E002 (`mentionsMarker`), or use no refs at all.
 * Values of the keys that name things (ids, types, roles, tool names) are never refs: whoever reads
 * a parsed line reads those as they are.
 */

import { canonicalLiteral, decodeLiteral, literalCounts, literalEnd, literalPrefix, scanLiteral, type LiteralFacts } from "./json-literal.js";
import type { LiteralCounts } from "./literal-kernel.js";

/** Literals shorter than this are parsed as usual: a ref costs more than decoding a short string. */
export const REF_MIN_BYTES = 256;

/**
 * Lines shorter than this are parsed as usual without looking for refs: few hold a long literal,
 * and looking costs a pass over the line before the full parse (shorter lines seldom hold one,
 * longer ones nearly always do). A tool
 * result's line from this size on is looked into, so that its output is located (a chain task then
 * copies it from the file without parsing the line, nor holding it decoded).
 */
export const REF_LINE_MIN_BYTES = 1024;

/**
 * The same for any other line (an assistant's, mostly). Looking is a pass over the line in
 * JavaScript before a parse of the rest, which costs more than JSON.parse decoding a few short
 * literals: below this size a full parse and lightening is faster, from it on refs are.
 */
export const REF_OTHER_LINE_MIN_BYTES = 4096;

/** From what size a line is looked into for refs: a tool result's, or any other line's. */
export function refLineMinBytes(toolResult: boolean): number {
  return toolResult ? REF_LINE_MIN_BYTES : REF_OTHER_LINE_MIN_BYTES;
}

/** A long string value left in its line's bytes. */
export interface LiteralRef extends LiteralFacts {
  /** The line's bytes; the literal is `bytes[start, end)`, quotes included. */
  bytes: Uint8Array;
  /** Offset of the opening quote. */
  start: number;
}

const OPEN = "\uE002";
const CLOSE = "\uE003";
const OPEN_CODE = 0xe002;

/** How U+E002 can be spelled in a line: raw, or escaped with either case of hex digit (in its text, and in its bytes). */
const OPEN_SPELLED = /\uE002|\\u[eE]002/;
const OPEN_SPELLINGS = [Buffer.from(OPEN, "utf8"), Buffer.from("\\ue002"), Buffer.from("\\uE002")];

/** True when `bytes` (lines of a session, a path) mention U+E002 in any spelling: text that could pass for a marker. */
export function mentionsMarker(bytes: Buffer): boolean {
  return OPEN_SPELLINGS.some((spelling) => bytes.includes(spelling));
}

/** Keys whose values are read as names, never as bulk: always parsed as real strings. */
const NAME_KEYS = new Set(["type", "id", "parentId", "role", "toolCallId", "toolName", "name", "customType", "stopReason", "timestamp"]);

const QUOTE = 0x22;
const OPEN_BRACE = 0x7b;
const COLON = 0x3a;

/**
 * The line parsed with its long value literals as markers (appended to `refs`), or undefined when
 * this way does not apply: a line shorter than REF_LINE_MIN_BYTES, no long value, a U+E002 in its
 * parsed part, or not valid JSON (the caller
 * then parses the line in full, which also words any error exactly as usual). `line` must be
 * valid UTF-8 and must stay unchanged while the refs are used.
 *
 * One pass over the bytes finds every string literal: a quote outside a string opens one, and
 * literalEnd finds where it closes.
 */
export function parseWithRefs(line: Buffer, refs: LiteralRef[]): { value: unknown } | undefined {
  // An entry is an object; anything else (a stray string, leading blanks) is parsed as usual.
  if (line.length < REF_LINE_MIN_BYTES || line[0] !== OPEN_BRACE) return undefined;
  const first = refs.length;
  // The line's literals are scanned one after another into one scratch.
  const counts = literalCounts();
  const pieces: string[] = [];
  const length = line.length;
  let copied = 0;
  let keyStart = -1;
  for (let at = 0; at < length; ) {
    if (line[at] !== QUOTE) {
      at++;
      continue;
    }
    const start = at;
    const end = literalEnd(line, start, length);
    if (end === -1) return rollBack(refs, first); // unterminated: the full parse says so
    at = end;
    const isKey = nextNonBlank(line, end) === COLON;
    const facts = isKey ? null : refFacts(line, keyStart, start, end, counts);
    if (facts === undefined) return rollBack(refs, first);
    if (facts !== null) {
      const before = line.toString("utf8", copied, start);
      if (OPEN_SPELLED.test(before)) return rollBack(refs, first);
      pieces.push(before, JSON.stringify(markerFor(refs.length)));
      refs.push({ ...facts, bytes: line, start });
      copied = end;
    }
    keyStart = isKey ? start : -1;
  }
  const rest = line.toString("utf8", copied, length);
  if (refs.length === first || OPEN_SPELLED.test(rest)) return rollBack(refs, first);
  pieces.push(rest);
  try {
    return { value: JSON.parse(pieces.join("")) as unknown };
  } catch {
    // Invalid JSON outside the literals: the full parse reports it, in its own words.
    return rollBack(refs, first);
  }
}

function rollBack(refs: LiteralRef[], length: number): undefined {
  refs.length = length;
  return undefined;
}

/** The first byte from `from` on that is not a JSON blank, or -1. */
function nextNonBlank(line: Uint8Array, from: number): number {
  const at = nextNonBlankAt(line, from);
  return at === -1 ? -1 : line[at]!;
}

function nextNonBlankAt(line: Uint8Array, from: number): number {
  for (let at = from; at < line.length; at++) {
    const byte = line[at]!;
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d && byte !== 0x0a) return at;
  }
  return -1;
}

/**
 * The facts of the value literal `line[start, end)` when it becomes a ref; null when it stays a
 * string (short, or the value of a name key), undefined when the line is not valid JSON there (it
 * is then left to the full parse).
 */
function refFacts(line: Buffer, keyStart: number, start: number, end: number, counts: LiteralCounts): LiteralFacts | null | undefined {
  if (end - start < REF_MIN_BYTES) return null;
  // The value of the key before it only when nothing but blanks lies between the colon and it
  // (a string inside an array or object under that key is not the key's value).
  const keyEnd = keyStart === -1 ? -1 : line.lastIndexOf(COLON, start);
  if (keyEnd !== -1 && nextNonBlankAt(line, keyEnd + 1) === start) {
    // Names are short.
    if (keyEnd - keyStart <= 32) {
      const key = scanLiteral(line, keyStart, keyEnd, counts);
      if (key === undefined) return undefined;
      if (NAME_KEYS.has(decodeLiteral(line, keyStart, key.end))) return null;
    }
  }
  return scanLiteral(line, start, end, counts);
}

/** The marker that names `refs[index]`. */
export function markerFor(index: number): string {
  return `${OPEN}${index}${CLOSE}`;
}

/** The ref a whole-marker string names, or undefined for any other string. */
export function refOf(text: string, refs: readonly LiteralRef[]): LiteralRef | undefined {
  // Every read in bounds: one past an end (an empty string's first character, a marker-like
  // text's number past the refs) is undefined all the same, but makes V8 recompile the
  // lightening walk that inlines this.
  if (text.length < 3 || text.charCodeAt(0) !== OPEN_CODE || text.charCodeAt(text.length - 1) !== CLOSE.charCodeAt(0)) return undefined;
  const index = Number(text.slice(1, -1));
  return Number.isInteger(index) && index >= 0 && index < refs.length ? refs[index] : undefined;
}

/** True when `text` holds a marker, whole or inside (text parts joined by contentText). */
export function holdsMarker(text: string): boolean {
  return text.includes(OPEN);
}

/** The string a ref stands for, decoded in full. */
export function refText(ref: LiteralRef): string {
  return decodeLiteral(ref.bytes, ref.start, ref.end);
}

/** At least `minUnits` UTF-16 units from the start of the ref's string (all of it when shorter). */
export function refPrefix(ref: LiteralRef, minUnits: number): string {
  return literalPrefix(ref.bytes, ref.start, ref.end, minUnits);
}

const MARKER_ANYWHERE = /\uE002(\d+)\uE003/g;

/** `text` with every marker inside it replaced by the string it stands for. */
export function resolveMarkers(text: string, refs: readonly LiteralRef[]): string {
  // Without refs there is no marker: what looks like one is text (of a value parsed in full).
  if (refs.length === 0 || !holdsMarker(text)) return text;
  return text.replace(MARKER_ANYWHERE, (_, index: string) => refText(refAt(refs, index)));
}

/**
 * `value` (parsed JSON, possibly holding markers) with every marker resolved, as a new value;
 * what holds none is returned as it is. Iterative: parsed JSON may nest deeper than the call stack.
 */
export function resolvedValue(value: unknown, refs: readonly LiteralRef[]): unknown {
  if (refs.length === 0) return value;
  const root = resolvedChild(value, refs);
  // Pairs of a container and its copy, whose members are still to resolve.
  const pending: unknown[] = [];
  if (root !== value) pending.push(value, root);
  while (pending.length > 0) {
    const copy = pending.pop() as Record<string, unknown>;
    const source = pending.pop() as Record<string, unknown>;
    for (const key in source) {
      const child = source[key];
      const resolved = resolvedChild(child, refs);
      if (typeof child === "object" && child !== null) pending.push(child, resolved);
      // A parsed `__proto__` key is an own property: assigned, it would set the prototype instead.
      if (key === "__proto__") Object.defineProperty(copy, key, { value: resolved, enumerable: true, writable: true, configurable: true });
      else copy[key] = resolved;
    }
  }
  return root;
}

/** A string resolved, an empty copy of a container (filled by resolvedValue), anything else as it is. */
function resolvedChild(value: unknown, refs: readonly LiteralRef[]): unknown {
  if (typeof value === "string") return resolveMarkers(value, refs);
  if (typeof value !== "object" || value === null) return value;
  return Array.isArray(value) ? new Array<unknown>(value.length) : {};
}

/**
 * JSON text serialised from values holding markers, as parts whose concatenation is the JSON of
 * the real values: each marker becomes the body of its canonical literal (the bytes between the
 * quotes), which is exactly how JSON.stringify writes that string inside any string it is part of.
 */
export function expandMarkers(json: string, refs: readonly LiteralRef[]): Array<string | Uint8Array> {
  if (refs.length === 0 || !holdsMarker(json)) return [json];
  const parts: Array<string | Uint8Array> = [];
  let copied = 0;
  for (const match of json.matchAll(MARKER_ANYWHERE)) {
    const ref = refAt(refs, match[1]!);
    const literal = canonicalLiteral(ref.bytes, ref.start, ref);
    parts.push(json.slice(copied, match.index), literal.subarray(1, literal.length - 1));
    copied = match.index + match[0].length;
  }
  parts.push(json.slice(copied));
  return parts;
}

/** The length `json` (serialised from values holding markers) has once every marker is expanded. */
export function resolvedJsonLength(json: string, refs: readonly LiteralRef[]): number {
  if (refs.length === 0 || !holdsMarker(json)) return json.length;
  let length = json.length;
  // A literal's body (what replaces its marker) is its JSON length without the two quotes.
  for (const match of json.matchAll(MARKER_ANYWHERE)) length += refAt(refs, match[1]!).jsonLength - 2 - match[0].length;
  return length;
}

function refAt(refs: readonly LiteralRef[], index: string): LiteralRef {
  const ref = refs[Number(index)];
  if (ref === undefined) throw new Error(`internal error: marker ${index} names no literal`);
  return ref;
}
