// The WebAssembly kernel (core/literal-kernel.ts, literal-kernel.wat) must give exactly what the
// JavaScript passes it replaces give (core/json-literal.ts scanLiteralInJs, core/unescape-literal.ts unescapeLiteralInJs):
// the same end, counts, bytes, line-feed offsets and errors, on literals whose escapes, multi-byte
// characters and invalid bytes fall at every position of the kernel's 16-byte steps. The
// committed module must be what its source compiles to.
import fs from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scanLiteral, scanLiteralInJs } from "../src/core/json-literal.js";
import { unescapeLiteral, unescapeLiteralInJs } from "../src/core/unescape-literal.js";
import { KERNEL_MAX_BYTES, KERNEL_MIN_BYTES, kernelScan, kernelUnescape, type LiteralCounts } from "../src/core/literal-kernel.js";
// @ts-expect-error: a build script, plain JavaScript without declarations
import { KERNEL_MODULE, kernelModuleText } from "../scripts/build-wasm.mjs";

const freshCounts = (): LiteralCounts => ({ rawUnits: -1, escapedBytes: -1, escapedUnits: -1, escapedJson: -1, escapedUtf8: -1, lone: -1, canonical: false });

/** Both scans of bytes[start, limit): their results must be equal. */
function expectSameScan(bytes: Uint8Array, start: number, limit: number): number {
  const js = freshCounts();
  const wasm = freshCounts();
  const jsEnd = scanLiteralInJs(bytes, start, limit, js);
  const wasmEnd = kernelScan(bytes, start, limit, wasm);
  expect(wasmEnd).toBe(jsEnd);
  if (jsEnd !== -1) expect(wasm).toEqual(js);
  return jsEnd;
}

/** What unescaping gives: the bytes and the noted line feeds, or the error's class and message. */
function unescaped(run: () => Buffer, lineFeeds: number[]): unknown {
  try {
    return { bytes: run().toString("hex"), lineFeeds };
  } catch (error) {
    return { error: (error as Error).constructor.name, message: (error as Error).message };
  }
}

/** Both unescapes of the literal bytes[start, end): their results must be equal. */
function expectSameUnescape(bytes: Uint8Array, start: number, end: number): void {
  const jsFeeds: number[] = [];
  const wasmFeeds: number[] = [];
  const js = unescaped(() => unescapeLiteralInJs(bytes, start, end, jsFeeds), jsFeeds);
  const wasm = unescaped(() => unescapeLiteral(bytes, start, end, wasmFeeds), wasmFeeds);
  expect(wasm).toEqual(js);
}

/** Pieces of a literal's body: raw runs of every length around the kernel's 16 bytes, characters of 1-4 UTF-8 bytes, every kind of escape. */
const piece = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 40 }).map((n) => "abcdefghijklmnopqrstuvwxyz0123456789 -_.".slice(0, n)) },
  { weight: 2, arbitrary: fc.constantFrom("é", "ж", "€", "中", "😀", "𝄞", "\u0091") },
  { weight: 3, arbitrary: fc.constantFrom('\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", " \\n", "\\r\\n", "\\u0009\\n", "\\t\\n") },
  { weight: 2, arbitrary: fc.constantFrom("\\u000a", "\\u000A", "\\u0020\\u000a", "\\u001f", "\\u001F", "\\u0041", "\\u00e9", "\\u20ac", "\\u20AC", "\\u0000") },
  { weight: 1, arbitrary: fc.constantFrom("\\ud83d\\ude00", "\\uD83D\\uDE00", "\\ud83d", "\\ude00", "\\ud83dx", "\\udbff\\udfff") },
);
/** What JSON.parse rejects in a literal's body. */
const invalidPiece = fc.constantFrom("\u0001", "\n", "\\x", "\\u12", "\\u12g4", "\\", '"');

const body = fc.array(piece, { maxLength: 30 }).map((pieces) => pieces.join(""));

/** A literal of `text` (its body as written, not escaped again) at `offset` in a buffer with bytes after it. */
function placed(text: string, offset: number): { bytes: Buffer; start: number; end: number } {
  const literal = Buffer.from(`"${text}"`, "utf8");
  const bytes = Buffer.concat([Buffer.alloc(offset, 0x61), literal, Buffer.from(',"next":"x"}')]);
  return { bytes, start: offset, end: offset + literal.length };
}

describe("literal kernel", () => {
  it("is built from its source as it is now (npm run wasm)", async () => {
    expect(fs.readFileSync(KERNEL_MODULE, "utf8")).toBe(await kernelModuleText());
  });

  it("scans valid literals as the JavaScript pass does, whatever their length and offset", () => {
    fc.assert(
      fc.property(body, fc.integer({ min: 0, max: 20 }), (text, offset) => {
        const { bytes, start, end } = placed(text, offset);
        expect(expectSameScan(bytes, start, bytes.length)).toBe(end);
        // And what JSON says of the string (the oracle), through scanLiteral's dispatch.
        const decoded = JSON.parse(bytes.subarray(start, end).toString("utf8")) as string;
        const facts = scanLiteral(bytes, start, end);
        expect([facts?.units, facts?.jsonLength]).toEqual([decoded.length, JSON.stringify(decoded).length]);
        // The limit is honoured at every cut of the literal, the closing quote included.
        for (const limit of [end, end - 1, start + 1 + ((end - start) >> 1)]) expectSameScan(bytes, start, limit);
      }),
      { numRuns: 2500 },
    );
  });

  it("rejects what JSON.parse rejects, wherever in the 16-byte steps it falls", () => {
    fc.assert(
      fc.property(body, invalidPiece, body, (before, bad, after) => {
        const { bytes, start } = placed(before + bad + after, 3);
        expectSameScan(bytes, start, bytes.length);
      }),
      { numRuns: 1500 },
    );
  });

  it("unescapes as the JavaScript pass does: bytes, the line feeds after a blank, and errors", () => {
    fc.assert(
      fc.property(body, fc.option(invalidPiece, { freq: 4 }), body, (before, bad, after) => {
        const { bytes, start, end } = placed(before + (bad ?? "") + after, 5);
        // A literal shorter than the kernel's minimum would go to JavaScript: padded past it.
        const padded = end - start >= KERNEL_MIN_BYTES ? { bytes, start, end } : placed(`${"p".repeat(KERNEL_MIN_BYTES)}${before}${bad ?? ""}${after}`, 5);
        if (bad === '"') return; // the literal would end there
        expectSameUnescape(padded.bytes, padded.start, padded.end);
      }),
      { numRuns: 2500 },
    );
  });

  it("takes every raw run length from 0 to 48 before and after an escape, and at the end", () => {
    for (let before = 0; before <= 48; before++) {
      for (let after = 0; after <= 48; after++) {
        for (const escape of ["\\n", " \\n", "\\ud83d\\ude00", "\\u00e9", "é"]) {
          const { bytes, start, end } = placed(`${"x".repeat(KERNEL_MIN_BYTES)}${"a".repeat(before)}${escape}${"b".repeat(after)}`, 0);
          expectSameScan(bytes, start, bytes.length);
          expectSameUnescape(bytes, start, end);
        }
      }
    }
  });

  it("grows its memory for a literal of the largest size it takes, and still gives the same results after", () => {
    const line = "line with a trailing blank \\n\\tindented \\u00e9 and a pair \\ud83d\\ude00\\r\\n";
    const text = line.repeat(Math.floor((KERNEL_MAX_BYTES - 2) / line.length));
    const big = placed(text, 0);
    expect(big.end - big.start).toBeLessThanOrEqual(KERNEL_MAX_BYTES);
    expect(expectSameScan(big.bytes, big.start, big.end)).toBe(big.end);
    expectSameUnescape(big.bytes, big.start, big.end);
    expect(unescapeLiteral(big.bytes, big.start, big.end).equals(Buffer.from(JSON.parse(`"${text}"`) as string, "utf8"))).toBe(true);
    const small = placed(`${"s".repeat(KERNEL_MIN_BYTES)}\\n`, 7);
    expectSameScan(small.bytes, small.start, small.bytes.length);
    expectSameUnescape(small.bytes, small.start, small.end);
  });

  it("leaves literals outside its range to the JavaScript passes, with the same facts", () => {
    const huge = placed("y".repeat(KERNEL_MAX_BYTES) + "\\n", 0);
    const facts = scanLiteral(huge.bytes, huge.start, huge.end);
    expect(facts?.end).toBe(huge.end);
    expect(facts?.units).toBe(KERNEL_MAX_BYTES + 1);
    expect(unescapeLiteral(huge.bytes, huge.start, huge.end).length).toBe(KERNEL_MAX_BYTES + 1);
  });
});
