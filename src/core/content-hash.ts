/**
 * Upstream's dedup content hash (reference §3.2): SHA-1 hex over the tool name, a NUL byte and the
 * normalised output (CRLF to LF, trailing blanks stripped per line, whole text trimmed).
 * Kept bit-compatible so pi-condense and chainpress agree on `contentHash`.
 *
 * Upstream normalises in four passes (replace, split, per-line regex, join, trim). This file does the
 * same in one scan that never builds the normalised text: it finds the `\n`s with `indexOf`, and the
 * normalised text is the input with a few runs cut out (the `\r` of each CRLF, trailing spaces and
 * tabs before each line break, whitespace at both ends), so it is fed to SHA-1 as slices of the
 * input between those cuts, coalesced into chunks of at most {@link CHUNK_CHARS} UTF-16 units.
 *
 * Why trimming first is the same as trimming last: every step only ever removes whitespace, so the
 * first and last non-whitespace characters of the input survive and bound what the final `trim()`
 * keeps; none of the steps can act across a non-whitespace character, so normalising the text
 * between them (inclusive) gives exactly the trimmed result.
 *
 * `contentHashOfUtf8` makes the same cuts on the UTF-8 bytes of a tool output as read from a session
 * line, so the hash of a megabyte output needs no decoded string at all.
 */

import { createHash, type Hash } from "node:crypto";
import { isHighSurrogate } from "./json-escapes.js";
import { utf8CharBytes } from "./utf8-bytes.js";

/** Upper bound on the UTF-16 units handed to one `Hash.update` (bounds the transient UTF-8 buffer). */
const CHUNK_CHARS = 64 * 1024;

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;

/** What upstream's per-line `[ \t]+$` strips. */
function isBlank(code: number): boolean {
  return code === SPACE || code === TAB;
}

/**
 * What the normalisation may cut right before a line feed (a CR, a space or a tab): a line feed
 * after anything else is left as it is with all that precedes it. For callers that note such line
 * feeds for `contentHashOfUtf8`.
 */
export function cutsBeforeLineFeed(code: number): boolean {
  return code === CR || isBlank(code);
}

/**
 * What `String.prototype.trim()` strips: ECMAScript WhiteSpace and LineTerminator (the same set as
 * regex `\s`), i.e. TAB..CR, SPACE, NBSP, BOM, U+2028/U+2029 and the Unicode `Zs` category.
 */
function isTrimmable(code: number): boolean {
  if (code <= SPACE) return code === SPACE || (code >= TAB && code <= CR);
  if (code < 0x1680) return code === 0xa0;
  return (
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/**
 * Calls `emit(start, end)` for consecutive, non-empty ranges of `text` whose concatenation is the
 * normalised text. Every range starts at the first kept character or at a kept `\n`, and ends at the
 * last kept character or just before a removed `\r`, space or tab, so no range splits a surrogate pair.
 */
function forEachNormalizedRange(text: string, emit: (start: number, end: number) => void): void {
  // The final trim(), done first (see the file comment).
  let start = 0;
  let end = text.length;
  while (start < end && isTrimmable(text.charCodeAt(start))) start++;
  while (end > start && isTrimmable(text.charCodeAt(end - 1))) end--;
  if (start === end) return;

  // text[start] and text[end - 1] are not whitespace, so every `\n` found below has a character before
  // it inside [start, end), and the backward scans stop at `start` or at the previous `\n` at the latest.
  let rangeStart = start;
  for (let lf = text.indexOf("\n", start); lf !== -1 && lf < end; lf = text.indexOf("\n", lf + 1)) {
    let lineEnd = lf;
    // CRLF -> LF happens before the per-line strip: "a \t\r\n" loses the \r and then the blanks, but
    // only one \r per \n ("\r\r\n" keeps one \r, which then shields the blanks before it).
    if (text.charCodeAt(lineEnd - 1) === CR) lineEnd--;
    while (isBlank(text.charCodeAt(lineEnd - 1))) lineEnd--;
    if (lineEnd !== lf) {
      emit(rangeStart, lineEnd);
      rangeStart = lf; // the `\n` itself is kept and opens the next range
    }
  }
  emit(rangeStart, end);
}

/** Feeds ranges of `text` to `hash` as UTF-8 in chunks of at most CHUNK_CHARS units, never splitting a surrogate pair. */
class ChunkedUtf8Feeder {
  private pending = "";

  constructor(
    private readonly hash: Hash,
    private readonly text: string,
  ) {}

  add(start: number, end: number): void {
    while (end - start > CHUNK_CHARS) {
      let cut = start + CHUNK_CHARS;
      // A pair split across two update() calls would hash as two U+FFFD instead of one 4-byte character.
      if (isHighSurrogate(this.text.charCodeAt(cut - 1))) cut--;
      this.append(start, cut);
      start = cut;
    }
    this.append(start, end);
  }

  flush(): void {
    if (this.pending.length > 0) this.hash.update(this.pending, "utf8");
    this.pending = "";
  }

  private append(start: number, end: number): void {
    if (this.pending.length + (end - start) > CHUNK_CHARS) this.flush();
    this.pending += this.text.slice(start, end);
  }
}

/** Upstream's normalisation as a string (the hash below never builds it). */
export function normalizeResultText(text: string): string {
  const parts: string[] = [];
  forEachNormalizedRange(text, (start, end) => parts.push(text.slice(start, end)));
  return parts.join("");
}

export function contentHash(toolName: string, resultText: string): string {
  return textHash(toolName, resultText).digest("hex");
}

/** The hash contentHash digests, still open (see contentHashWithParts). */
export function textHash(toolName: string, resultText: string): Hash {
  const hash = createHash("sha1").update(toolName, "utf8").update("\0");
  const feeder = new ChunkedUtf8Feeder(hash, resultText);
  forEachNormalizedRange(resultText, (start, end) => feeder.add(start, end));
  feeder.flush();
  return hash;
}

/** A non-text content part as the content hash covers it: its index and its exact JSON text. */
export interface HashedPart {
  at: number;
  json: string | Uint8Array;
}

/**
 * The content hash of an output with non-text parts (core/archived-parts.ts): upstream's hash of
 * its text (`text`, from textHash or textHashOfUtf8), continued with each part's index and JSON,
 * so two outputs with the same text and different images never share a hash. Text-only outputs
 * keep upstream's hash.
 */
export function contentHashWithParts(text: Hash, parts: readonly HashedPart[]): string {
  for (const part of parts) {
    text.update(`\0part ${part.at}\0`, "utf8");
    if (typeof part.json === "string") text.update(part.json, "utf8");
    else text.update(part.json);
  }
  return text.digest("hex");
}

/** The code point of the UTF-8 character starting at `at` (valid UTF-8, so no check). */
function codePointAt(utf8: Uint8Array, at: number): number {
  const lead = utf8[at]!;
  if (lead < 0x80) return lead;
  if (lead < 0xe0) return ((lead & 0x1f) << 6) | (utf8[at + 1]! & 0x3f);
  if (lead < 0xf0) return ((lead & 0x0f) << 12) | ((utf8[at + 1]! & 0x3f) << 6) | (utf8[at + 2]! & 0x3f);
  return ((lead & 0x07) << 18) | ((utf8[at + 1]! & 0x3f) << 12) | ((utf8[at + 2]! & 0x3f) << 6) | (utf8[at + 3]! & 0x3f);
}

/**
 * {@link forEachNormalizedRange} on UTF-8 bytes: the same cuts, in bytes. The trimmable characters
 * are decoded at both ends and tested with {@link isTrimmable} (every one of them is in the BMP, so a
 * code point tests as its code unit would, and an astral character is never trimmable, as neither of
 * its surrogates is). CR, LF, space and tab are ASCII, and an ASCII byte is always a character of its
 * own in UTF-8, so the line-break cuts are the same byte tests as the unit tests there.
 */
function forEachNormalizedByteRange(utf8: Uint8Array, emit: (start: number, end: number) => void, lfAfterBlank?: readonly number[]): void {
  let start = 0;
  let end = utf8.length;
  while (start < end && isTrimmable(codePointAt(utf8, start))) start += utf8CharBytes(utf8[start]!);
  while (end > start) {
    let lead = end - 1;
    while (lead > start && (utf8[lead]! & 0xc0) === 0x80) lead--; // back over continuation bytes
    if (!isTrimmable(codePointAt(utf8, lead))) break;
    end = lead;
  }
  if (start === end) return;

  // As in forEachNormalizedRange: utf8[start] and the last character are not whitespace, so the
  // backward scans stop at `start` or at the previous `\n` at the latest.
  let rangeStart = start;
  const cut = (lf: number): void => {
    let lineEnd = lf;
    if (utf8[lineEnd - 1] === CR) lineEnd--; // one \r per \n, see forEachNormalizedRange
    while (isBlank(utf8[lineEnd - 1]!)) lineEnd--;
    if (lineEnd !== lf) {
      emit(rangeStart, lineEnd);
      rangeStart = lf;
    }
  };
  if (lfAfterBlank === undefined) {
    for (let lf = utf8.indexOf(LF, start); lf !== -1 && lf < end; lf = utf8.indexOf(LF, lf + 1)) cut(lf);
  } else {
    // Any other line feed is one the loop above would find nothing to cut before.
    for (const lf of lfAfterBlank) if (lf > start && lf < end) cut(lf);
  }
  emit(rangeStart, end);
}

/** Ranges at least this long go to `Hash.update` as they are; shorter ones are copied together first. */
const DIRECT_BYTES = 4096;
/** Largest buffer short ranges are copied into. */
const PENDING_BYTES = 64 * 1024;
/**
 * Ranges from this long are copied by `set` (a memmove), shorter ones a byte at a time, which
 * costs less than a view and a call. Cuts are rare in real output (a line with trailing blanks),
 * so most ranges are hundreds to thousands of bytes, too many to copy a byte at a time.
 */
const NATIVE_COPY_BYTES = 64;

/**
 * Feeds ranges of `utf8` to `hash`. An update() per range costs more than copying a line-sized
 * range, so short ranges are hashed a buffer at a time.
 */
class CoalescingByteFeeder {
  private pending: Buffer | undefined;
  private used = 0;

  constructor(
    private readonly hash: Hash,
    private readonly utf8: Uint8Array,
  ) {}

  add(start: number, end: number): void {
    if (end - start >= DIRECT_BYTES) {
      this.flush();
      this.hash.update(this.utf8.subarray(start, end));
      return;
    }
    if (this.used + (end - start) > PENDING_BYTES) this.flush();
    this.pending ??= Buffer.allocUnsafe(Math.min(PENDING_BYTES, this.utf8.length)); // the ranges never add up to more than the input
    if (end - start < NATIVE_COPY_BYTES) {
      for (let i = start; i < end; i++) this.pending[this.used++] = this.utf8[i]!;
      return;
    }
    this.pending.set(this.utf8.subarray(start, end), this.used);
    this.used += end - start;
  }

  flush(): void {
    if (this.pending !== undefined && this.used > 0) this.hash.update(this.pending.subarray(0, this.used));
    this.used = 0;
  }
}

/**
 * `contentHash(toolName, text)` for the text whose valid UTF-8 is `utf8`, computed on the bytes (a
 * tool output read straight from a session line is never decoded): SHA-1 is fed the kept ranges of
 * the input, which are already the UTF-8 that contentHash encodes its ranges to.
 *
 * `lfAfterBlank`, when the caller has it (core/unescape-literal.ts `unescapeLiteral` notes it as it
 * writes the bytes): every offset of a line feed that follows a CR, a space or a tab, ascending.
 * Then no other line feed is looked for: few line feeds of real output follow a blank, and
 * searching every one of them was most of the hashing.
 */
export function contentHashOfUtf8(toolName: string, utf8: Uint8Array, lfAfterBlank?: readonly number[]): string {
  return textHashOfUtf8(toolName, utf8, lfAfterBlank).digest("hex");
}

/** The hash contentHashOfUtf8 digests, still open (see contentHashWithParts). */
export function textHashOfUtf8(toolName: string, utf8: Uint8Array, lfAfterBlank?: readonly number[]): Hash {
  const hash = createHash("sha1").update(toolName, "utf8").update("\0");
  const feeder = new CoalescingByteFeeder(hash, utf8);
  forEachNormalizedByteRange(utf8, (start, end) => feeder.add(start, end), lfAfterBlank);
  feeder.flush();
  return hash;
}
