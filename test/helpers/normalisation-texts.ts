/**
 * fast-check text for the content-hash normalisation tests: what it treats specially (CR/LF mixes,
 * blank runs before line breaks, every unicode space trim() strips and some near misses) mixed
 * with ordinary and multi-byte characters; with or without lone surrogates (UTF-8 cannot carry
 * them, so the byte-level tests leave them out).
 */

import fc from "fast-check";

/** What trim() strips, plus near misses (U+180E left Zs in Unicode 6.3; U+200B is not a space). */
export const UNICODE_SPACES = ["\u00a0", "\u1680", "\u2000", "\u2005", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff", "\u180e", "\u200b", "\u0085"];

export const BLANKS = [" ", "\t"];
export const NEWLINES = ["\n", "\r\n", "\r", "\r\r\n"];

export interface NormalisationTexts {
  /** Single pieces: special fragments, any character, short binary strings. */
  fragments: string[];
  fragment: fc.Arbitrary<string>;
  /** Text built from the fragments. */
  specialText: fc.Arbitrary<string>;
  /** Line-shaped text: optional indent, content, trailing blanks, then some line break. */
  lineText: fc.Arbitrary<string>;
}

export function normalisationTexts(options: { loneSurrogates: boolean }): NormalisationTexts {
  const fragments = [
    "\n", "\r\n", "\r", "\r\r\n", "\n\r", " ", "  ", "\t", " \t ", "\v", "\f",
    ...UNICODE_SPACES,
    ...(options.loneSurrogates ? ["\ud800", "\udbff", "\udc00", "\udfff"] : ["\u{10ffff}", "\u007f"]),
    "😀", "𝄞", "a", "Z", "0", "-", "é", "読", "\u0000", "x y", "$ ls -la",
  ];
  const anyCharacter = options.loneSurrogates
    ? fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit))
    : fc
        .integer({ min: 0, max: 0x10ffff })
        .filter((point) => point < 0xd800 || point > 0xdfff)
        .map((point) => String.fromCodePoint(point));
  const fragment = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...fragments) },
    { weight: 1, arbitrary: anyCharacter },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 4 }) },
  );
  const lineText = fc
    .array(
      fc.record({
        indent: fc.string({ unit: fc.constantFrom(...BLANKS, ...UNICODE_SPACES), maxLength: 4 }),
        body: fc.string({ unit: fragment, maxLength: 20 }),
        trailing: fc.string({ unit: fc.constantFrom(...BLANKS, "\r", ...UNICODE_SPACES), maxLength: 5 }),
        newline: fc.constantFrom(...NEWLINES),
      }),
      { maxLength: 30 },
    )
    .map((lines) => lines.map((l) => l.indent + l.body + l.trailing + l.newline).join(""));
  return { fragments, fragment, specialText: fc.string({ unit: fragment, maxLength: 200 }), lineText };
}
