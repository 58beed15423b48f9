/**
 * A JSON string literal's decoded string as UTF-8 bytes, unescaped straight from the literal's
 * bytes (core/json-literal.ts) without building a JS string: what a spill file and a content hash
 * are made of.
 */

import { cutsBeforeLineFeed } from "./content-hash.js";
import { hexUnit, isHighSurrogate, isLowSurrogate, SHORT_ESCAPE } from "./json-escapes.js";
import { KERNEL_MAX_BYTES, KERNEL_MIN_BYTES, kernelUnescape, type UnescapeFailure } from "./literal-kernel.js";

const BACKSLASH = 0x5c;
const LOWER_U = 0x75;
const LF = 0x0a;

/** Writes code point `point` (not a surrogate) as UTF-8 at `at`; returns the offset after it. */
function putCodePoint(out: Uint8Array, at: number, point: number): number {
  if (point < 0x80) {
    out[at] = point;
    return at + 1;
  }
  if (point < 0x800) {
    out[at] = 0xc0 | (point >> 6);
    out[at + 1] = 0x80 | (point & 0x3f);
    return at + 2;
  }
  if (point < 0x10000) {
    out[at] = 0xe0 | (point >> 12);
    out[at + 1] = 0x80 | ((point >> 6) & 0x3f);
    out[at + 2] = 0x80 | (point & 0x3f);
    return at + 3;
  }
  out[at] = 0xf0 | (point >> 18);
  out[at + 1] = 0x80 | ((point >> 12) & 0x3f);
  out[at + 2] = 0x80 | ((point >> 6) & 0x3f);
  out[at + 3] = 0x80 | (point & 0x3f);
  return at + 4;
}

/**
 * Bytes after an escape that are moved by hand while looking for the next backslash; a run longer
 * than that is finished by `indexOf` and `copyWithin`, native calls that allocate nothing (a
 * `subarray` per run cost as much as the unescaping itself). Tool output escapes a line feed, a tab
 * or a quote every few dozen bytes, where a native call per run costs more than moving by hand.
 */
const HAND_SCAN = 128;

/**
 * The decoded string's UTF-8 bytes, unescaped straight from the literal's bytes without building a
 * JS string. Precondition: the literal is valid and has no lone surrogate (it throws on either,
 * since UTF-8 cannot carry a lone surrogate). Equal to Buffer.from(decodeLiteral(...), "utf8").
 *
 * The body is copied once, then unescaped in place: no escape is shorter than its UTF-8, so the
 * write offset never passes the read offset, and each run between two backslashes moves back by
 * what the escapes before it saved (a \uD83D\uDE00 pair becomes one 4-byte character), which is
 * faster than a copy into a second buffer through a view per run.
 *
 * With `lfAfterBlank`, the offset in the result of every line feed that follows a CR, a space or a
 * tab is appended to it, in order: the only line breaks that contentHash's normalisation cuts
 * before (core/content-hash.ts `contentHashOfUtf8`). Every line feed of a literal is an escape, so
 * they are found here for a test per escape, instead of a search for every line feed there.
 *
 * A long literal is unescaped by the WebAssembly kernel (core/literal-kernel.ts), the others by
 * `unescapeLiteralInJs`: the same bytes, offsets and errors.
 */
export function unescapeLiteral(bytes: Uint8Array, start: number, end: number, lfAfterBlank?: number[]): Buffer {
  const span = end - start;
  if (span < KERNEL_MIN_BYTES || span > KERNEL_MAX_BYTES) return unescapeLiteralInJs(bytes, start, end, lfAfterBlank);
  const out = kernelUnescape(bytes, start, end, lfAfterBlank);
  if (Buffer.isBuffer(out)) return out;
  throw unescapeError(out, start + 1);
}

/** The error unescapeLiteral throws for a literal whose body starts at `base`. */
function unescapeError({ failure, at }: UnescapeFailure, base: number): Error {
  const offset = base + at;
  if (failure === "escape") return new SyntaxError(`unescapeLiteral: invalid escape at offset ${offset}`);
  if (failure === "unicode-escape") return new SyntaxError(`unescapeLiteral: invalid \\u escape at offset ${offset}`);
  return new RangeError(`unescapeLiteral: lone surrogate at offset ${offset}`);
}

/** unescapeLiteral's pass in JavaScript, the reference the kernel is tested against. */
export function unescapeLiteralInJs(bytes: Uint8Array, start: number, end: number, lfAfterBlank?: number[]): Buffer {
  const length = end - start - 2;
  const out = Buffer.allocUnsafe(length);
  out.set(bytes.subarray(start + 1, end - 1));
  let read = out.indexOf(BACKSLASH);
  if (read === -1) return out;
  let written = read;
  // Where reading and writing go on after a \u escape: one object for the whole literal.
  const stepped = { read: 0, written: 0 };
  while (read < length) {
    // out[read] is a backslash: its escape first.
    const unit = SHORT_ESCAPE[out[read + 1] ?? 0]!; // 0: a backslash that ends the literal, rejected
    if (unit >= 0) {
      if (unit === LF && lfAfterBlank !== undefined && written > 0 && cutsBeforeLineFeed(out[written - 1]!)) lfAfterBlank.push(written);
      out[written++] = unit;
      read += 2;
    } else {
      const failure = unescapeLongAt(out, read, written, stepped);
      if (failure !== undefined) throw unescapeError(failure, start + 1);
      read = stepped.read;
      // A line feed spelt \u000a.
      if (lfAfterBlank !== undefined && out[written] === LF && written > 0 && cutsBeforeLineFeed(out[written - 1]!)) lfAfterBlank.push(written);
      written = stepped.written;
    }
    // The raw run up to the next backslash.
    const limit = Math.min(length, read + HAND_SCAN);
    while (read < limit) {
      const byte = out[read]!;
      if (byte === BACKSLASH) break;
      out[written++] = byte;
      read++;
    }
    if (read === limit && read < length) {
      let next = out.indexOf(BACKSLASH, read);
      if (next === -1) next = length;
      out.copyWithin(written, read, next);
      written += next - read;
      read = next;
    }
  }
  return out.subarray(0, written);
}

/** Where reading and writing go on after an escape. */
interface Stepped {
  read: number;
  written: number;
}

/**
 * Writes the \u escape at `read` at `written`, and where reading and writing go on into `stepped`;
 * the failure instead (a lone surrogate, or an invalid escape).
 */
function unescapeLongAt(out: Buffer, read: number, written: number, stepped: Stepped): UnescapeFailure | undefined {
  if (out[read + 1] !== LOWER_U) return { failure: "escape", at: read };
  const unit = read + 6 <= out.length ? hexUnit(out, read + 2) : -1;
  if (unit < 0) return { failure: "unicode-escape", at: read };
  if (!isHighSurrogate(unit) && !isLowSurrogate(unit)) return step(stepped, read + 6, putCodePoint(out, written, unit));
  const paired = isHighSurrogate(unit) && read + 12 <= out.length && out[read + 6] === BACKSLASH && out[read + 7] === LOWER_U;
  const low = paired ? hexUnit(out, read + 8) : -1;
  if (!isLowSurrogate(low)) return { failure: "lone-surrogate", at: read };
  return step(stepped, read + 12, putCodePoint(out, written, 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)));
}

function step(stepped: Stepped, read: number, written: number): undefined {
  stepped.read = read;
  stepped.written = written;
  return undefined;
}
