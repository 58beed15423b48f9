// headPreviewOfUtf8 takes the preview from a text's UTF-8 bytes; it must equal headPreview of the
// decoded text for every well-formed text and every byte budget, above all where the cut falls
// inside a multi-byte character or next to a line break.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { headPreview, headPreviewOfUtf8 } from "../src/core/head-preview.js";

/** Asserts the byte preview on a Buffer and on a plain Uint8Array view that does not start its buffer. */
function expectSame(text: string, maxBytes: number): void {
  const expected = headPreview(text, maxBytes);
  const utf8 = Buffer.from(text, "utf8");
  expect(headPreviewOfUtf8(utf8, maxBytes)).toBe(expected);
  const backing = new Uint8Array(utf8.length + 5);
  backing.set(utf8, 5);
  expect(headPreviewOfUtf8(backing.subarray(5), maxBytes)).toBe(expected);
}

/** Characters of every UTF-8 width, line breaks, and a BOM (which must be kept, not stripped). */
const PIECES = ["a", "\n", "\r\n", "é", "€", "読", "😀", "𝄞", "\u{10ffff}", "\ufeff", " ", "\n\n", "x\ny"];
const piece = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...PIECES) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 3 }) },
);
const text = fc.array(piece, { maxLength: 60 }).map((pieces) => pieces.join(""));

describe("headPreviewOfUtf8 ≡ headPreview of the decoded text", () => {
  it("every budget from 0 to past the end, on a text with every width and line breaks at the cuts", () => {
    for (const sample of ["", "a", "\n", "\nabc", "é", "😀😀", "x😀\n😀y", "ab\n€\n読😀\r\n\ufeff𝄞\n", "\ufeffabc\n", "line1\nline2\nline3"]) {
      const bytes = Buffer.byteLength(sample, "utf8");
      for (let maxBytes = 0; maxBytes <= bytes + 2; maxBytes++) expectSame(sample, maxBytes);
    }
  });

  it("fuzz: random well-formed text, budget from 0 to beyond its length", () => {
    fc.assert(
      fc.property(text, fc.nat(), (t, seed) => {
        expectSame(t, seed % (Buffer.byteLength(t, "utf8") + 4));
      }),
      { numRuns: 5000 },
    );
  });

  it("fuzz: every budget around a multi-byte character right before or after a line break", () => {
    const around = fc.tuple(text, fc.constantFrom("é", "€", "😀", "\u{10ffff}"), fc.constantFrom("\n", "\r\n", "", "\n\n"), fc.boolean(), text);
    fc.assert(
      fc.property(around, ([head, wide, newline, wideFirst, tail]) => {
        const t = head + (wideFirst ? wide + newline : newline + wide) + tail;
        const at = Buffer.byteLength(head, "utf8");
        for (let maxBytes = Math.max(0, at - 2); maxBytes <= at + 7; maxBytes++) expectSame(t, maxBytes);
      }),
      { numRuns: 1000 },
    );
  });

  it("a long output: only the head is needed", () => {
    const long = `${"é😀 line\n".repeat(50_000)}end`;
    for (const maxBytes of [0, 1, 2048, 2049, 2050, 2051, 100_000]) expectSame(long, maxBytes);
  });
});
