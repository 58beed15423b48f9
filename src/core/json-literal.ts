/**
 * JSON string literals read as the UTF-8 bytes they are in a session line, never decoded into a JS
 * string: tool outputs are megabytes long and most of what is asked of them (is it valid, how long
 * is it as a string, as JSON, as UTF-8, is it spelt the way JSON.stringify spells it) is answered by
 * one pass over the bytes. Only a short head (`literalPrefix`) or, when a caller really needs it, the
 * whole string (`decodeLiteral`) is decoded; its UTF-8 comes straight from the bytes
 * (core/unescape-literal.ts).
 *
 * Offsets are byte offsets into a buffer of valid UTF-8 (callers check whole lines with `isUtf8`).
 * A literal spans from its opening quote to just past its closing quote. Since the closing quote,
 * the backslash and everything JSON escapes are ASCII, and an ASCII byte is always a character of
 * its own in UTF-8, every escape and every raw character can be told apart byte by byte.
 */

import { ASCII_JSON_CHARS, hexUnit, isHighSurrogate, isLowSurrogate, SHORT_ESCAPE } from "./json-escapes.js";
import { KERNEL_MAX_BYTES, KERNEL_MIN_BYTES, kernelScan, type LiteralCounts } from "./literal-kernel.js";
import { utf8CharBytes, utf8Slice } from "./utf8-bytes.js";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LOWER_U = 0x75;

/** What a JSON string literal's bytes say about the string it decodes to. */
export interface LiteralFacts {
  /** Offset just past the closing quote. */
  end: number;
  /** UTF-16 length of the decoded string (what `.length` gives). */
  units: number;
  /** `JSON.stringify(decoded).length`. */
  jsonLength: number;
  /** `Buffer.byteLength(decoded, "utf8")` (a lone surrogate counts 3, as U+FFFD). */
  utf8Bytes: number;
  /** The literal's bytes are exactly `Buffer.from(JSON.stringify(decoded))`. */
  canonical: boolean;
  /** The decoded string holds a lone surrogate (possible only through a \u escape). */
  loneSurrogate: boolean;
}

/** Marks, in {@link RAW_UNITS}, the bytes that end a run of raw characters. */
const STOP = 0xff;

/**
 * Per byte value, the UTF-16 units a raw byte adds to the decoded string: 1 for ASCII and for the
 * lead of a 2- or 3-byte character, 2 for the lead of a 4-byte one (a surrogate pair), 0 for a
 * continuation byte; STOP for `"`, `\` and the controls JSON.parse rejects unescaped. A raw
 * character is also written raw by JSON.stringify, so it adds as many JSON characters as units.
 */
const RAW_UNITS = (() => {
  const table = new Uint8Array(256);
  for (let byte = 0; byte < 256; byte++) table[byte] = byte < 0x80 ? 1 : byte < 0xc0 ? 0 : byte < 0xf0 ? 1 : 2;
  for (let byte = 0; byte < 0x20; byte++) table[byte] = STOP;
  table[QUOTE] = STOP;
  table[BACKSLASH] = STOP;
  return table;
})();

/** True when none of the four hex digits at `at` is an uppercase letter (JSON.stringify writes lowercase). */
function isLowercaseHex(bytes: Uint8Array, at: number): boolean {
  for (let i = at; i < at + 4; i++) if (bytes[i]! >= 0x41 && bytes[i]! <= 0x46) return false;
  return true;
}

/** UTF-8 bytes of a code unit outside the surrogates (a lone surrogate is written as U+FFFD: 3). */
function utf8Width(unit: number): number {
  return unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3;
}

/**
 * Validates and measures the literal opening at `start` (bytes[start] must be 0x22), reading no
 * further than `limit` (default bytes.length). Undefined exactly when JSON.parse would reject that
 * literal: a raw byte below 0x20, an invalid escape, a bad \u hex digit, or no closing quote before
 * `limit`. A long literal is scanned by the WebAssembly kernel (core/literal-kernel.ts), the
 * others by `scanLiteralInJs`: the same counts. The kernel is given a copy of bytes[start, limit),
 * so a caller that knows where the literal ends (literalEnd) passes that as `limit`. `counts` is
 * scratch the scan overwrites: a caller that scans literal after literal passes the same one each
 * time (a scan runs to its end before the next starts), so no scan allocates its own.
 */
export function scanLiteral(bytes: Uint8Array, start: number, limit = bytes.length, counts: LiteralCounts = literalCounts()): LiteralFacts | undefined {
  if (bytes[start] !== QUOTE) throw new RangeError(`scanLiteral: no opening quote at offset ${start}`);
  const span = limit - start;
  const end = span >= KERNEL_MIN_BYTES && span <= KERNEL_MAX_BYTES ? kernelScan(bytes, start, limit, counts) : scanLiteralInJs(bytes, start, limit, counts);
  if (end === -1) return undefined;
  return {
    end,
    units: counts.rawUnits + counts.escapedUnits,
    jsonLength: 2 + counts.rawUnits + counts.escapedJson,
    utf8Bytes: end - start - 2 - counts.escapedBytes + counts.escapedUtf8,
    canonical: counts.canonical,
    loneSurrogate: counts.lone > 0,
  };
}

/** Scratch for scanLiteral's counts. */
export function literalCounts(): LiteralCounts {
  return { rawUnits: 0, escapedBytes: 0, escapedUnits: 0, escapedJson: 0, escapedUtf8: 0, lone: 0, canonical: true };
}

/**
 * scanLiteral's pass in JavaScript, the reference the kernel is tested against: the offset just
 * past the closing quote, or -1; the counts go to `out`.
 *
 * The hot loop: raw characters are counted by a table lookup per byte, and only escapes take the
 * slow path. A \u high surrogate is first counted as a lone one (6 JSON characters, 3 UTF-8 bytes);
 * a \u low surrogate right after it turns the two into a pair (2 characters, 4 bytes in all).
 */
export function scanLiteralInJs(bytes: Uint8Array, start: number, limit: number, out: LiteralCounts): number {
  let rawUnits = 0; // units (and JSON characters) of the raw characters
  let escapedBytes = 0; // source bytes taken by escapes
  let escapedUnits = 0;
  let escapedJson = 0;
  let escapedUtf8 = 0;
  let lone = 0; // lone surrogates so far
  let canonical = true;
  let afterHigh = -1; // offset just past the last \u high-surrogate escape
  let i = start + 1;
  for (;;) {
    let unitsHere = 0;
    while (i < limit && (unitsHere = RAW_UNITS[bytes[i]!]!) !== STOP) {
      rawUnits += unitsHere;
      i++;
    }
    if (i >= limit) return -1;
    const byte = bytes[i]!;
    if (byte === QUOTE) break;
    if (byte !== BACKSLASH || i + 1 >= limit) return -1; // a raw control, or a cut escape
    const letter = bytes[i + 1]!;
    if (letter !== LOWER_U) {
      const unit = SHORT_ESCAPE[letter]!;
      if (unit < 0) return -1;
      escapedBytes += 2;
      escapedUnits += 1;
      escapedUtf8 += 1;
      escapedJson += ASCII_JSON_CHARS[unit]!;
      if (unit === 0x2f) canonical = false; // JSON.stringify writes "/" raw
      i += 2;
      continue;
    }
    const unit = i + 6 <= limit ? hexUnit(bytes, i + 2) : -1;
    if (unit < 0) return -1;
    escapedBytes += 6;
    escapedUnits += 1;
    if (isLowSurrogate(unit) && afterHigh === i) {
      // Pair: the high one was counted as lone (6 characters, 3 bytes); the pair is 2 and 4 in all.
      lone--;
      escapedJson -= 4;
      escapedUtf8 += 1;
      canonical = false; // JSON.stringify writes a pair raw
    } else if (isHighSurrogate(unit) || isLowSurrogate(unit)) {
      lone++;
      escapedJson += 6;
      escapedUtf8 += 3;
      if (!isLowercaseHex(bytes, i + 2)) canonical = false;
      if (isHighSurrogate(unit)) afterHigh = i + 6;
    } else {
      escapedJson += unit < 0x80 ? ASCII_JSON_CHARS[unit]! : 1;
      escapedUtf8 += utf8Width(unit);
      // JSON.stringify spells only the controls without a short escape as \u00xx (lowercase).
      if (ASCII_JSON_CHARS[unit] !== 6 || !isLowercaseHex(bytes, i + 2)) canonical = false;
    }
    i += 6;
  }
  out.rawUnits = rawUnits;
  out.escapedBytes = escapedBytes;
  out.escapedUnits = escapedUnits;
  out.escapedJson = escapedJson;
  out.escapedUtf8 = escapedUtf8;
  out.lone = lone;
  out.canonical = canonical;
  return i + 1;
}

/** Bytes of a literal looked at one by one before its closing quote is searched for. */
const SHORT_LITERAL_BYTES = 32;

/**
 * Offset just past the closing quote of the literal opening at `start`, validating nothing; -1
 * when there is none before `limit`. The first bytes are looked at one by one (most literals of a
 * line are short keys and ids, and a native search per literal costs more than that), the rest is
 * searched with indexOf(0x22) and backslash parity, faster on real lines than either way alone.
 */
export function literalEnd(bytes: Uint8Array, start: number, limit: number): number {
  const shortEnd = Math.min(limit, start + 1 + SHORT_LITERAL_BYTES);
  let at = start + 1;
  while (at < shortEnd) {
    const byte = bytes[at]!;
    if (byte === QUOTE) return at + 1;
    at += byte === BACKSLASH ? 2 : 1;
  }
  for (let quote = bytes.indexOf(QUOTE, at); quote !== -1 && quote < limit; quote = bytes.indexOf(QUOTE, quote + 1)) {
    let backslashes = 0;
    while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++; // stops at the opening quote at the latest
    if (backslashes % 2 === 0) return quote + 1;
  }
  return -1;
}

/** The decoded string: JSON.parse of the literal's bytes. */
export function decodeLiteral(bytes: Uint8Array, start: number, end: number): string {
  return JSON.parse(utf8Slice(bytes, start, end)) as string;
}

/**
 * A prefix of the decoded string at least `minUnits` UTF-16 units long (the whole string when it is
 * shorter), decoding only a prefix of the bytes (the literal can be megabytes long). Exactly
 * `decodeLiteral(...).slice(0, result.length)`: the bytes are cut between escapes and between UTF-8
 * characters, so the cut-off literal decodes to a prefix of the string. A cut between the two
 * escapes of a pair leaves its high half, as slice() would. At most one unit over `minUnits`.
 */
export function literalPrefix(bytes: Uint8Array, start: number, end: number, minUnits: number): string {
  const close = end - 1;
  let units = 0;
  let i = start + 1;
  while (units < minUnits && i < close) {
    const byte = bytes[i]!;
    if (byte === BACKSLASH) {
      i += bytes[i + 1] === LOWER_U ? 6 : 2;
      units += 1;
    } else {
      i += utf8CharBytes(byte);
      units += byte >= 0xf0 ? 2 : 1;
    }
  }
  if (i >= close) return decodeLiteral(bytes, start, end);
  return JSON.parse(`${utf8Slice(bytes, start, i)}"`) as string;
}

/** The canonical literal (UTF-8 of JSON.stringify(decoded)): a subarray of `bytes` when `facts.canonical`, else re-encoded. */
export function canonicalLiteral(bytes: Uint8Array, start: number, facts: LiteralFacts): Uint8Array {
  if (facts.canonical) return bytes.subarray(start, facts.end);
  return Buffer.from(JSON.stringify(decodeLiteral(bytes, start, facts.end)), "utf8");
}
