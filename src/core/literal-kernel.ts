/**
 * The WebAssembly kernel of the two passes over every byte of a long JSON string literal: measure
 * it (`kernelScan`, for core/json-literal.ts `scanLiteral`) and unescape it (`kernelUnescape`, for
 * core/unescape-literal.ts `unescapeLiteral`). Tool outputs are most of a large session's bytes,
 * and in JavaScript these passes look at a byte at a time; the kernel (literal-kernel.wat) looks at
 * 16 with SIMD and stops only at escapes. Each call copies the literal into the kernel's memory, so
 * the results are exactly the JavaScript passes' (test/core-literal-kernel.test.ts).
 *
 * One instance per thread, made on first use (the module is small and compiles at once).
 */

import { cutsBeforeLineFeed } from "./content-hash.js";
import { ASCII_JSON_CHARS, HEX_DIGIT, SHORT_ESCAPE } from "./json-escapes.js";
import { LITERAL_KERNEL_BASE64 } from "./literal-kernel-wasm.js";

/** Literals from this many bytes on go through the kernel: for shorter ones the copy and the call cost more than they save. */
export const KERNEL_MIN_BYTES = 64;
/**
 * And up to this many: the kernel's memory never shrinks, and unescaping needs ~4 times the
 * literal's size there. Longer literals (rare) take the JavaScript passes.
 */
export const KERNEL_MAX_BYTES = 1 << 20;

/** Where the kernel finds its tables (see literal-kernel.wat), and where the caller's bytes start. */
const HEX_AT = 0;
const ASCII_JSON_AT = 256;
const SHORT_ESCAPE_AT = 384;
const CUTS_BEFORE_LF_AT = 640;
const DATA_AT = 1024;
/** Free bytes after each region: the kernel's 16-byte loads and stores pass a region's end by up to 15. */
const PAD = 16;
const PAGE = 64 * 1024;

/** What a scan counts, as core/json-literal.ts `scanLiteral` turns it into a literal's facts. */
export interface LiteralCounts {
  /** Units (and JSON characters) of the raw characters. */
  rawUnits: number;
  /** Source bytes taken by escapes. */
  escapedBytes: number;
  escapedUnits: number;
  escapedJson: number;
  escapedUtf8: number;
  /** Lone surrogates. */
  lone: number;
  canonical: boolean;
}

/** Why a literal cannot be unescaped, and the offending escape's offset in the literal's body. */
export interface UnescapeFailure {
  failure: "escape" | "unicode-escape" | "lone-surrogate";
  at: number;
}

/**
 * The part of the WebAssembly API used here: TypeScript declares it with the DOM library, which
 * this project does not load.
 */
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
};

interface KernelGlobal {
  value: number;
}

interface KernelExports {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  scan(start: number, limit: number): number;
  unescape(input: number, length: number, output: number, lineFeedsAt: number): number;
  rawUnits: KernelGlobal;
  escapedBytes: KernelGlobal;
  escapedUnits: KernelGlobal;
  escapedJson: KernelGlobal;
  escapedUtf8: KernelGlobal;
  lone: KernelGlobal;
  canonical: KernelGlobal;
  lineFeeds: KernelGlobal;
  errorAt: KernelGlobal;
}

/** The kernel's instance, made on first use: one per thread (its memory is that thread's scratch). */
let kernel: KernelExports | undefined;

function instance(): KernelExports {
  if (kernel === undefined) {
    const module = new WebAssembly.Module(Buffer.from(LITERAL_KERNEL_BASE64, "base64"));
    kernel = new WebAssembly.Instance(module, {}).exports as unknown as KernelExports;
    const memory = new Uint8Array(kernel.memory.buffer);
    for (let byte = 0; byte < 256; byte++) {
      memory[HEX_AT + byte] = HEX_DIGIT[byte]! < 0 ? 0xff : HEX_DIGIT[byte]!;
      memory[SHORT_ESCAPE_AT + byte] = SHORT_ESCAPE[byte]! < 0 ? 0xff : SHORT_ESCAPE[byte]!;
      memory[CUTS_BEFORE_LF_AT + byte] = cutsBeforeLineFeed(byte) ? 1 : 0;
    }
    memory.set(ASCII_JSON_CHARS, ASCII_JSON_AT);
  }
  return kernel;
}

/** The kernel's memory, grown to at least `bytes` (a view made after growing: growing detaches the old one). */
function memoryOf(exports: KernelExports, bytes: number): Uint8Array {
  const missing = bytes - exports.memory.buffer.byteLength;
  if (missing > 0) exports.memory.grow(Math.ceil(missing / PAGE));
  return new Uint8Array(exports.memory.buffer);
}

/**
 * `scanLiteral` of `bytes[start, limit)` (at most KERNEL_MAX_BYTES): the offset just past the
 * closing quote, or -1 where JSON.parse would reject the literal; the counts go to `counts`.
 */
export function kernelScan(bytes: Uint8Array, start: number, limit: number, counts: LiteralCounts): number {
  const exports = instance();
  const length = limit - start;
  memoryOf(exports, DATA_AT + length + PAD).set(bytes.subarray(start, limit), DATA_AT);
  const end = exports.scan(DATA_AT, DATA_AT + length);
  if (end === -1) return -1;
  counts.rawUnits = exports.rawUnits.value;
  counts.escapedBytes = exports.escapedBytes.value;
  counts.escapedUnits = exports.escapedUnits.value;
  counts.escapedJson = exports.escapedJson.value;
  counts.escapedUtf8 = exports.escapedUtf8.value;
  counts.lone = exports.lone.value;
  counts.canonical = exports.canonical.value === 1;
  return start + (end - DATA_AT);
}

const FAILURES: ReadonlyArray<UnescapeFailure["failure"]> = ["escape", "unicode-escape", "lone-surrogate"];

/**
 * `unescapeLiteral` of the literal `bytes[start, end)` (at most KERNEL_MAX_BYTES): its UTF-8 in a
 * buffer of its own, with the line feeds after a blank appended to `lfAfterBlank` when given; or
 * why it cannot be unescaped.
 */
export function kernelUnescape(bytes: Uint8Array, start: number, end: number, lfAfterBlank?: number[]): Buffer | UnescapeFailure {
  const exports = instance();
  const length = end - start - 2;
  // The body, then room for its UTF-8 (never longer), then for the line feeds' offsets (a line
  // feed takes at least two bytes of the body, and four as an offset).
  const output = alignUp(DATA_AT + length + PAD, 16);
  const lineFeedsAt = alignUp(output + length + PAD, 4);
  const memory = memoryOf(exports, lineFeedsAt + 2 * length + PAD);
  memory.set(bytes.subarray(start + 1, end - 1), DATA_AT);
  const written = exports.unescape(DATA_AT, length, output, lineFeedsAt);
  if (written < 0) return { failure: FAILURES[-written - 1]!, at: exports.errorAt.value };
  if (lfAfterBlank !== undefined) {
    const offsets = new Int32Array(exports.memory.buffer, lineFeedsAt, exports.lineFeeds.value);
    for (const offset of offsets) lfAfterBlank.push(offset);
  }
  const out = Buffer.allocUnsafe(written);
  out.set(memory.subarray(output, output + written));
  return out;
}

function alignUp(offset: number, alignment: number): number {
  return Math.ceil(offset / alignment) * alignment;
}
