// The single-pass contentHash / normalizeResultText must agree with the multi-pass reference (the
// implementation it replaced, UPSTREAM-FORMAT.md §3.2) on every input: fixed vectors, an exhaustive
// sweep of UTF-16 code units, and fast-check fuzzing over everything the normalisation treats specially.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { normalisationTexts } from "./helpers/normalisation-texts.js";
import { contentHash, normalizeResultText } from "../src/core/content-hash.js";
import { linearReferenceContentHash, linearReferenceNormalizeResultText, referenceContentHash, referenceNormalizeResultText } from "./core-content-hash-reference.js";

/**
 * Asserts both the normalised text and the hash (the hash also covers the chunked UTF-8 feeding),
 * against the reference in linear time (long texts; "the oracle" below holds it to the reference).
 */
function expectSame(text: string, toolName = "bash"): void {
  expect(normalizeResultText(text)).toBe(linearReferenceNormalizeResultText(text));
  expect(contentHash(toolName, text)).toBe(linearReferenceContentHash(toolName, text));
}

const { fragments: FRAGMENTS, fragment, specialText, lineText } = normalisationTexts({ loneSurrogates: true });

describe("single-pass normalisation ≡ the multi-pass reference", () => {
  it("fixed vectors", () => {
    const vectors = [
      "", " ", "\n", "\r\n", "\r", "\t \r\n \t", "hello\nworld", "  hello  \r\nworld\t\n\n", "héllo 😀",
      "a\r\nb\r\nc", "a  \nb\t\t\nc \t ", "a\t\r\nb", "\n\n  a\nb  \n\n", "a\n  b", "a\n\nb", "a\rb", "a\r \nb",
      "a \r\r\nb", "a\r\r\n\r\nb", "a\u00a0\nb", "a\nb\u00a0", "\u3000a", "a\nb\r", "a \u00a0 \nb", "a\t\u3000\t\nb",
      "\ud800", "a\ud800 \nb", " \udc00\n", "😀  \r\n😀", "a\u2028 \nb", "a \u2028b", "\ufeffa\ufeff",
    ];
    for (const text of vectors) expectSame(text);
  });

  it("every UTF-16 code unit, at the start, at a line end before LF and CRLF, and at the end", () => {
    for (let unit = 0; unit <= 0xffff; unit++) {
      const c = String.fromCharCode(unit);
      for (const text of [c, `${c}a`, `a${c}`, `a${c}\nb`, `a ${c} \r\nb`, `a\n${c}\nb`]) {
        // Compare texts only (cheap); the hashes are covered by the other cases.
        if (normalizeResultText(text) !== referenceNormalizeResultText(text)) {
          expect({ unit: unit.toString(16), normalized: normalizeResultText(text) }).toEqual({
            unit: unit.toString(16),
            normalized: referenceNormalizeResultText(text),
          });
        }
      }
    }
  });

  it("fuzz: text made of special fragments", () => {
    fc.assert(fc.property(specialText, (text) => expectSame(text)), { numRuns: 3000 });
  });

  it("fuzz: line-shaped text with CR/LF mixes, indentation and trailing blanks", () => {
    fc.assert(fc.property(lineText, (text) => expectSame(text)), { numRuns: 3000 });
  });

  it("fuzz: arbitrary code points and arbitrary code units (lone surrogates)", () => {
    const units = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)), maxLength: 100 });
    fc.assert(fc.property(fc.oneof(fc.string({ unit: "binary", maxLength: 100 }), units), (text) => expectSame(text)), { numRuns: 2000 });
  });

  it("fuzz: tool names are hashed as given (UTF-8, lone surrogates included)", () => {
    const name = fc.string({ unit: fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ unit: "binary", maxLength: 2 })), maxLength: 10 });
    fc.assert(fc.property(name, specialText, (toolName, text) => expectSame(text, toolName)), { numRuns: 1000 });
  });

  it("fuzz: very long text (many hash chunks) built by repeating fuzzed text", () => {
    const longText = fc
      .tuple(fc.oneof(specialText, lineText), fc.integer({ min: 1, max: 200_000 }), fc.string({ unit: fragment, maxLength: 3 }))
      .filter(([piece]) => piece.length > 0)
      .map(([piece, targetLength, tail]) => piece.repeat(Math.ceil(targetLength / piece.length)) + tail);
    fc.assert(fc.property(longText, (text) => expectSame(text)), { numRuns: 60 });
  });
});

describe("the oracle", () => {
  it("in linear time is the reference, text for text and hash for hash", () => {
    const short = fc.string({ unit: fc.constantFrom(" ", "\t", "a", "\u00a0", "\r", "\n", "\u3000", "😀", "\ud800"), maxLength: 60 });
    fc.assert(
      fc.property(fc.oneof(short, specialText, lineText), (text) => {
        expect(linearReferenceNormalizeResultText(text)).toBe(referenceNormalizeResultText(text));
        expect(linearReferenceContentHash("bash", text)).toBe(referenceContentHash("bash", text));
      }),
      { numRuns: 3000 },
    );
  });
});

describe("chunked UTF-8 feeding", () => {
  it("surrogate pairs straddling every possible chunk cut hash as one 4-byte character", () => {
    // Shift a run of astral characters by 0..3 units so the 64Ki-unit cuts fall on both halves.
    for (let shift = 0; shift < 4; shift++) {
      expectSame("a".repeat(shift) + "😀".repeat(100_000));
      expectSame("a".repeat(shift) + "😀".repeat(40_000) + "\r\n" + "𝄞 ".repeat(40_000) + "b");
    }
  });

  it("lone surrogates at chunk cuts still hash as U+FFFD each", () => {
    for (let shift = 0; shift < 3; shift++) {
      expectSame("a".repeat(shift) + "\ud800".repeat(70_000) + "x" + "\udc00".repeat(70_000));
      expectSame("a".repeat(shift) + "x\ud800".repeat(70_000));
    }
  });

  it("a long CRLF text with trailing blanks (many small ranges coalesced into chunks)", () => {
    const line = (i: number) => `${i % 7 === 0 ? "  " : ""}line ${i}: ${"é😀x".repeat(i % 5)}${" ".repeat(i % 3)}\t`.repeat(1 + (i % 2));
    expectSame(Array.from({ length: 40_000 }, (_, i) => line(i)).join("\r\n") + " \r\n\r\n");
  });

  it("a single ~1M-unit line with no line breaks", () => {
    expectSame(`  ${"abc def\t".repeat(125_000)}  `);
  });
});
