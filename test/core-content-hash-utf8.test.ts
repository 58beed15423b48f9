// contentHashOfUtf8 hashes a tool output from its UTF-8 bytes; it must equal contentHash of the
// decoded text on every well-formed text: fixed vectors, a sweep of every code point at the places
// the normalisation treats specially, and fast-check fuzzing over the same kinds of text as the
// string equivalence test (CR/LF mixes, blank runs, every unicode space, emoji), lone surrogates
// excepted (UTF-8 cannot carry them). And with the line feeds after blanks that unescapeLiteral
// notes, however the literal spells them, checked against a search of the bytes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NEWLINES, normalisationTexts } from "./helpers/normalisation-texts.js";
import { contentHash, contentHashOfUtf8 } from "../src/core/content-hash.js";
import { unescapeLiteral } from "../src/core/unescape-literal.js";

/** Asserts the byte hash on a Buffer and on a plain Uint8Array view that does not start its buffer. */
function expectSame(text: string, toolName = "bash"): void {
  const expected = contentHash(toolName, text);
  const utf8 = Buffer.from(text, "utf8");
  expect(contentHashOfUtf8(toolName, utf8)).toBe(expected);
  const backing = new Uint8Array(utf8.length + 3);
  backing.set(utf8, 3);
  expect(contentHashOfUtf8(toolName, backing.subarray(3))).toBe(expected);
}

const { fragments: FRAGMENTS, fragment, specialText, lineText } = normalisationTexts({ loneSurrogates: false });
const codePoint = fc
  .integer({ min: 0, max: 0x10ffff })
  .filter((point) => point < 0xd800 || point > 0xdfff)
  .map((point) => String.fromCodePoint(point));

describe("contentHashOfUtf8 ≡ contentHash of the decoded text", () => {
  it("fixed vectors", () => {
    const vectors = [
      "", " ", "\n", "\r\n", "\r", "\t \r\n \t", "\u3000 \t\r\n\ufeff\u2028\u00a0", "\u1680\u2000\u200a\u202f\u205f\u2029",
      "é", "😀", "\u3000é\u3000", " 😀\u2028", "\ufeff読\ufeff", "\u00a0\u0085\u00a0", "\u200b", "\u180e",
      "hello\nworld", "  hello  \r\nworld\t\n\n", "héllo 😀", "a\r\nb\r\nc", "a  \nb\t\t\nc \t ", "a\t\r\nb", "\n\n  a\nb  \n\n",
      "a\rb", "a\r \nb", "a \r\r\nb", "a\r\r\n\r\nb", "a\u00a0\nb", "a\nb\u00a0", "\u3000a", "a\nb\r", "a \u00a0 \nb",
      "a\t\u3000\t\nb", "😀  \r\n😀", "a\u2028 \nb", "a \u2028b", "\ufeffa\ufeff", "é \n", " \n読",
    ];
    for (const text of vectors) expectSame(text);
  });

  it("every code point, at the start, at a line end before LF and CRLF, and at the end", () => {
    for (let point = 0; point <= 0x10ffff; point += point < 0x10000 ? 1 : 0x3f1) {
      if (point >= 0xd800 && point <= 0xdfff) continue;
      const c = String.fromCodePoint(point);
      for (const text of [c, `${c}a`, `a${c}`, `${c} \r\n${c}`]) {
        const utf8 = Buffer.from(text, "utf8");
        if (contentHashOfUtf8("t", utf8) !== contentHash("t", text)) expect({ point: point.toString(16), text }).toBeUndefined();
      }
    }
  });

  it("fuzz: text made of special fragments", () => {
    fc.assert(fc.property(specialText, (text) => expectSame(text)), { numRuns: 3000 });
  });

  it("fuzz: line-shaped text with CR/LF mixes, indentation and trailing blanks", () => {
    fc.assert(fc.property(lineText, (text) => expectSame(text)), { numRuns: 3000 });
  });

  it("fuzz: arbitrary code points and graphemes", () => {
    const text = fc.oneof(fc.string({ unit: "binary", maxLength: 100 }), fc.string({ unit: "grapheme", maxLength: 50 }), fc.string({ unit: codePoint, maxLength: 100 }));
    fc.assert(fc.property(text, (t) => expectSame(t)), { numRuns: 2000 });
  });

  it("fuzz: tool names are hashed as given", () => {
    const name = fc.string({ unit: fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ unit: "binary", maxLength: 2 })), maxLength: 10 });
    fc.assert(fc.property(name, specialText, (toolName, text) => expectSame(text, toolName)), { numRuns: 1000 });
  });

  it("fuzz: very long text built by repeating fuzzed text", () => {
    const longText = fc
      .tuple(fc.oneof(specialText, lineText), fc.integer({ min: 1, max: 200_000 }), fc.string({ unit: fragment, maxLength: 3 }))
      .filter(([piece]) => piece.length > 0)
      .map(([piece, targetLength, tail]) => piece.repeat(Math.ceil(targetLength / piece.length)) + tail);
    fc.assert(fc.property(longText, (text) => expectSame(text)), { numRuns: 60 });
  });

  it("fuzz: short and long kept ranges interleaved (lines of up to 10k bytes ending in blanks)", () => {
    const line = fc.tuple(fc.integer({ min: 0, max: 10_000 }), fc.constantFrom("x", "é", "😀 ", "ab\tc"), fc.constantFrom("", " ", "\t ", " \r"), fc.constantFrom(...NEWLINES));
    const text = fc.array(line, { maxLength: 30 }).map((lines) => lines.map(([length, unit, trailing, newline]) => unit.repeat(Math.ceil(length / unit.length)) + trailing + newline).join(""));
    fc.assert(fc.property(text, (t) => expectSame(t)), { numRuns: 200 });
    expectSame(`${"a \n".repeat(10)}${"b".repeat(5000)} \n${"c \n".repeat(10)}${"d".repeat(70_000)}\t\r\n`);
  });
});

/**
 * The literal of `text` with each LF, CR, tab and space spelt as `\u` escapes where `picks` says
 * (cycled): unescapeLiteral must note a line feed however either side of it is spelt.
 */
function spelt(text: string, picks: readonly boolean[]): Buffer {
  let k = 0;
  const body = [...JSON.stringify(text).slice(1, -1).matchAll(/\\n|\\r|\\t| |\\u[0-9a-f]{4}|\\.|[^]/gu)].map(([piece]) => {
    const unit = piece === "\\n" ? 0x0a : piece === "\\r" ? 0x0d : piece === "\\t" ? 0x09 : piece === " " ? 0x20 : -1;
    if (unit === -1 || picks.length === 0 || !picks[k++ % picks.length]) return piece;
    return `\\u${unit.toString(16).padStart(4, "0")}`;
  });
  return Buffer.from(`"${body.join("")}"`, "utf8");
}

/** Offsets of the line feeds that follow a CR, a space or a tab in `utf8`: the oracle for the noted ones. */
function lineFeedsAfterBlank(utf8: Uint8Array): number[] {
  const found: number[] = [];
  for (let at = 1; at < utf8.length; at++) if (utf8[at] === 0x0a && [0x0d, 0x20, 0x09].includes(utf8[at - 1]!)) found.push(at);
  return found;
}

function expectSameNoted(text: string, picks: readonly boolean[], toolName = "bash"): void {
  const literal = spelt(text, picks);
  expect(JSON.parse(literal.toString("utf8"))).toBe(text); // the speller itself is right
  const noted: number[] = [];
  const utf8 = unescapeLiteral(literal, 0, literal.length, noted);
  expect(noted).toEqual(lineFeedsAfterBlank(utf8));
  expect(contentHashOfUtf8(toolName, utf8, noted)).toBe(contentHash(toolName, text));
}

describe("contentHashOfUtf8 with the line feeds unescapeLiteral notes", () => {
  it("fixed vectors, canonical and with every LF, CR, tab and space spelt \\u", () => {
    const vectors = ["", "\n", " \n", "\t\n", "\r\n", "a \r\nb", "a\t \nb \n", "\n\n \n", "x".repeat(300) + " \n" + "y".repeat(300), "é \n😀\t\r\n"];
    for (const text of vectors) for (const picks of [[], [true], [false, true]]) expectSameNoted(text, picks);
  });

  it("fuzz: line-shaped and special text, spelt in mixed ways", () => {
    const picks = fc.array(fc.boolean(), { maxLength: 7 });
    fc.assert(fc.property(fc.oneof(specialText, lineText), picks, (text, p) => expectSameNoted(text, p)), { numRuns: 3000 });
  });

  it("fuzz: long runs between line breaks, across the hand-moved stretch after each escape", () => {
    const line = fc.tuple(fc.integer({ min: 0, max: 400 }), fc.constantFrom("x", "é", "😀"), fc.constantFrom("", " ", "\t", "\r", " \t"), fc.constantFrom(...NEWLINES));
    const text = fc.array(line, { maxLength: 20 }).map((lines) => lines.map(([length, unit, trailing, newline]) => unit.repeat(length) + trailing + newline).join(""));
    fc.assert(fc.property(text, fc.array(fc.boolean(), { maxLength: 3 }), (t, p) => expectSameNoted(t, p)), { numRuns: 300 });
  });
});
