// JSON string literals read as UTF-8 bytes (core/json-literal.ts) must say exactly what JSON.parse
// and JSON.stringify say: for the canonical literal of any string, for other spellings of the same
// string (\u escapes in either case, `\/`, long forms of short escapes), for invalid literals, and
// for literals embedded at an offset in a longer line. The oracles are JSON.parse, JSON.stringify and
// Buffer, never the code under test.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalLiteral, decodeLiteral, literalEnd, literalPrefix, scanLiteral, type LiteralFacts } from "../src/core/json-literal.js";
import { unescapeLiteral } from "../src/core/unescape-literal.js";

/** True when the string has no lone surrogate (UTF-8 gives it back exactly). */
function isWellFormed(text: string): boolean {
  return Buffer.from(text, "utf8").toString("utf8") === text;
}

/** The facts, computed with JSON and Buffer from the decoded string and the literal's bytes. */
function expectedFacts(text: string, literal: Uint8Array, offset = 0): LiteralFacts {
  return {
    end: offset + literal.length,
    units: text.length,
    jsonLength: JSON.stringify(text).length,
    utf8Bytes: Buffer.byteLength(text, "utf8"),
    canonical: Buffer.from(JSON.stringify(text), "utf8").equals(literal),
    loneSurrogate: !isWellFormed(text),
  };
}

/** JSON.parse of the bytes, or undefined when it throws a SyntaxError (anything else is rethrown). */
function parseOrUndefined(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch (error) {
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
}

/** Every function of the module on the valid literal of `text` at `[start, start + literal.length)` of `buf`. */
function expectAgrees(buf: Uint8Array, start: number, text: string): void {
  const literal = buf.subarray(start, literalEndOf(buf, start));
  const facts = scanLiteral(buf, start);
  expect(facts).toEqual(expectedFacts(text, literal, start));
  if (facts === undefined) return;
  expect(literalEnd(buf, start, buf.length)).toBe(facts.end);
  // `limit` is honoured: the closing quote must lie before it.
  expect(scanLiteral(buf, start, facts.end)).toEqual(facts);
  expect(scanLiteral(buf, start, facts.end - 1)).toBeUndefined();
  expect(literalEnd(buf, start, facts.end - 1)).toBe(-1);

  expect(decodeLiteral(buf, start, facts.end)).toBe(text);
  const canonical = Buffer.from(JSON.stringify(text), "utf8");
  const rewritten = canonicalLiteral(buf, start, facts);
  expect(Buffer.from(rewritten).equals(canonical)).toBe(true);
  if (facts.canonical) expect(rewritten.buffer).toBe(buf.buffer); // a view, not a copy

  if (isWellFormed(text)) expect(unescapeLiteral(buf, start, facts.end).equals(Buffer.from(text, "utf8"))).toBe(true);
  else expect(() => unescapeLiteral(buf, start, facts.end)).toThrow(RangeError);

  for (let minUnits = 0; minUnits <= text.length + 1; minUnits++) {
    const prefix = literalPrefix(buf, start, facts.end, minUnits);
    expect(prefix).toBe(text.slice(0, prefix.length));
    // At least minUnits (or all of it), at most one unit more (half a raw pair cannot be cut off).
    expect(prefix.length).toBeGreaterThanOrEqual(Math.min(minUnits, text.length));
    expect(prefix.length).toBeLessThanOrEqual(Math.min(minUnits + 1, text.length));
  }
}

/** The end of the literal at `start` found the slow way: the shortest prefix that JSON.parse takes. */
function literalEndOf(buf: Uint8Array, start: number): number {
  for (let end = start + 2; end <= buf.length; end++) {
    if (buf[end - 1] === 0x22 && parseOrUndefined(buf.subarray(start, end)) !== undefined) return end;
  }
  throw new Error("no valid literal");
}

/** Characters JSON treats specially, the UTF-8 width boundaries, private-use delimiters, paired and lone surrogates. */
const SPECIAL = [
  '"', "\\", "/", "\u007f", "\u0080", "\u07ff", "\u0800", "\u2028", "\u2029", "\ue000", "\ue001", "\ue002", "\ue003",
  "\ufeff", "\uffff", "\ud83d", "\ude00", "\udbff", "\udc00", "😀", "𝄞", "\u{10ffff}", "é", "€", "a", " ",
];
const control = fc.integer({ min: 0, max: 0x1f }).map((unit) => String.fromCharCode(unit));
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
const piece = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: "grapheme", maxLength: 6 }) },
  { weight: 4, arbitrary: fc.constantFrom(...SPECIAL) },
  { weight: 2, arbitrary: control },
  { weight: 1, arbitrary: codeUnit },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 4 }) },
);
/** Any string: full unicode, controls, quotes and backslashes, lone and paired surrogates (joined pieces can pair up). */
const anyText = fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join(""));

/** `\uXXXX` for a code unit, each hex letter uppercase where its bit in `caseBits` is set. */
function uEscape(unit: number, caseBits: number): string {
  const hex = unit.toString(16).padStart(4, "0");
  return `\\u${[...hex].map((digit, i) => ((caseBits >> i) & 1 ? digit.toUpperCase() : digit)).join("")}`;
}

const SHORT_FORMS: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * A valid JSON literal (as source text) for `text`, each character spelt as `choices` say: raw
 * (where JSON allows it), as `\uXXXX` in random hex case, as its short escape, `/` also as `\/`.
 * A pair is written raw or as two escapes; a lone surrogate can only be an escape.
 */
function spell(text: string, choices: number[]): string {
  let k = 0;
  const next = () => choices[k++ % choices.length]!;
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    const choice = next();
    if (code > 0xffff) out += choice % 2 === 0 ? char : uEscape(char.charCodeAt(0), next()) + uEscape(char.charCodeAt(1), next());
    else if (code >= 0xd800 && code <= 0xdfff) out += uEscape(code, next());
    else if (code < 0x20 || char === '"' || char === "\\") out += SHORT_FORMS[char] !== undefined && choice % 2 === 0 ? SHORT_FORMS[char] : uEscape(code, next());
    else if (char === "/") out += ["/", "\\/", uEscape(code, next())][choice % 3];
    else out += choice % 3 === 0 ? uEscape(code, next()) : char;
  }
  return `${out}"`;
}
const choices = fc.array(fc.nat(), { minLength: 1, maxLength: 50 });

describe("fixed vectors", () => {
  // [literal source, units, jsonLength, utf8Bytes, canonical, loneSurrogate]
  const vectors: Array<[string, number, number, number, boolean, boolean]> = [
    ['""', 0, 2, 0, true, false],
    ['"abc"', 3, 5, 3, true, false],
    ['"a\\"b\\\\c"', 5, 9, 5, true, false],
    ['"\\b\\f\\n\\r\\t"', 5, 12, 5, true, false],
    ['"\\/"', 1, 3, 1, false, false],
    ['"\\u0041"', 1, 3, 1, false, false],
    ['"\\u00e9"', 1, 3, 2, false, false],
    ['"\\u20ac"', 1, 3, 3, false, false],
    ['"\\u001f"', 1, 8, 1, true, false],
    ['"\\u001F"', 1, 8, 1, false, false],
    ['"\\u0000"', 1, 8, 1, true, false],
    ['"\\u0008"', 1, 4, 1, false, false], // JSON.stringify writes \b
    ['"\\u0022"', 1, 4, 1, false, false],
    ['"\\u005c"', 1, 4, 1, false, false],
    ['"\u007f"', 1, 3, 1, true, false],
    ['"\\u007f"', 1, 3, 1, false, false],
    ['"\u2028\ue000"', 2, 4, 6, true, false],
    ['"\\u2028"', 1, 3, 3, false, false],
    ['"é€😀"', 4, 6, 9, true, false],
    ['"\\ud83d\\ude00"', 2, 4, 4, false, false],
    ['"\\uD83D\\uDE00"', 2, 4, 4, false, false],
    ['"\\ud83d"', 1, 8, 3, true, true],
    ['"\\uD83D"', 1, 8, 3, false, true],
    ['"\\ude00"', 1, 8, 3, true, true],
    ['"\\ud83d\\ud83d\\ude00"', 3, 10, 7, false, true], // a lone high, then a pair
    ['"\\ude00\\ud83d"', 2, 14, 6, true, true],
    ['"\\ud83d😀"', 3, 10, 7, true, true], // a lone high, then a raw pair
    ['"😀\\ude00"', 3, 10, 7, true, true], // a raw pair, then a lone low
    ['"\\ud83dx\\ude00"', 3, 15, 7, true, true],
    ['"\\ud83d\\n\\ude00"', 3, 16, 7, true, true],
  ];
  for (const [source, units, jsonLength, utf8Bytes, canonical, loneSurrogate] of vectors) {
    it(source, () => {
      const bytes = Buffer.from(source, "utf8");
      expect(scanLiteral(bytes, 0)).toEqual({ end: bytes.length, units, jsonLength, utf8Bytes, canonical, loneSurrogate });
      expectAgrees(bytes, 0, JSON.parse(source) as string);
    });
  }

  const invalid = [
    '"', '"abc', '"abc\\"', '"\\', '"\\x"', '"\\U0041"', '"\\a"', '"\\0"', "\"\\'\"", '"\\u12"', '"\\u12"x', '"\\u12g4"', '"\\u-123"',
    '"\\u 123"', '"a\u0001b"', '"\u001f"', '"\t"', '"\n"', '"\\é"', '"\\😀"',
  ];
  for (const source of invalid) {
    it(`rejects ${JSON.stringify(source)}`, () => {
      expect(() => JSON.parse(source)).toThrow(SyntaxError);
      expect(scanLiteral(Buffer.from(source, "utf8"), 0)).toBeUndefined();
    });
  }

  it("scanLiteral insists on an opening quote", () => {
    expect(() => scanLiteral(Buffer.from("abc"), 0)).toThrow(RangeError);
  });

  it("literalEnd follows backslash parity", () => {
    for (const [source, end] of [['"a\\"b"', 6], ['"a\\\\"b"', 5], ['"\\\\\\""x', 6], ['"abc', -1], ['"a\\"', -1]] as const) {
      expect(literalEnd(Buffer.from(source), 0, source.length)).toBe(end);
    }
  });

  it("literalPrefix decodes only a prefix of the bytes (the rest here is not even valid)", () => {
    const bytes = Buffer.from('"abc\\ndef\\q"');
    expect(literalPrefix(bytes, 0, bytes.length, 5)).toBe("abc\nd");
    expect(literalPrefix(Buffer.from('"\\ud83d\\ude00x"'), 0, 15, 1)).toBe("\ud83d"); // cut between the escapes of a pair
    expect(literalPrefix(Buffer.from('"😀x"'), 0, 7, 1)).toBe("😀"); // a raw pair stays whole
  });

  it("unescapeLiteral: long raw runs between escapes, and a pair of escapes as one 4-byte character", () => {
    const text = `${"a".repeat(100)}\n${"é".repeat(40)}\t"\\😀${"b".repeat(31)}`;
    for (const source of [JSON.stringify(text), spell(text, [0, 1, 2])]) {
      const bytes = Buffer.from(source, "utf8");
      expect(unescapeLiteral(bytes, 0, bytes.length).equals(Buffer.from(text, "utf8"))).toBe(true);
    }
    expect([...unescapeLiteral(Buffer.from('"\\uD83D\\uDE00"'), 0, 14)]).toEqual([0xf0, 0x9f, 0x98, 0x80]);
  });

  it("unescapeLiteral: every run length from 0 to 300 bytes after an escape (moved by hand up to a point, natively past it)", () => {
    for (const unit of ["x", "é", "😀"]) {
      const runs = Array.from({ length: 301 }, (_, length) => unit.repeat(Math.ceil(length / Buffer.byteLength(unit))));
      const text = runs.map((run, i) => run + ["\n", "\t", '"', "\\", "\u0001", "😀"][i % 6]).join("");
      // Each run also as the literal's last: the hand-moved stretch may end anywhere near its end.
      for (const t of [text, ...runs.map((run) => `\n${run}`)]) {
        for (const source of [JSON.stringify(t), spell(t, [2, 0, 1])]) {
          const bytes = Buffer.from(source, "utf8");
          expect(unescapeLiteral(bytes, 0, bytes.length).equals(Buffer.from(t, "utf8"))).toBe(true);
        }
      }
    }
  });
});

describe("canonical literals (JSON.stringify)", () => {
  it("fuzz: every function agrees with JSON on JSON.stringify(s)", () => {
    fc.assert(
      fc.property(anyText, (text) => expectAgrees(Buffer.from(JSON.stringify(text), "utf8"), 0, text)),
      { numRuns: 2000 },
    );
  });

  it("fuzz: long texts (long raw runs) repeated from fuzzed text", () => {
    const longText = fc.tuple(anyText, fc.integer({ min: 1, max: 50 })).map(([text, times]) => text.repeat(times));
    fc.assert(
      fc.property(longText, (text) => {
        const bytes = Buffer.from(JSON.stringify(text), "utf8");
        const facts = scanLiteral(bytes, 0);
        expect(facts).toEqual(expectedFacts(text, bytes));
        if (isWellFormed(text)) expect(unescapeLiteral(bytes, 0, bytes.length).equals(Buffer.from(text, "utf8"))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe("other spellings of the same string", () => {
  it("fuzz: same facts, canonical exactly when the bytes are JSON.stringify's, canonicalLiteral gives those", () => {
    fc.assert(
      fc.property(anyText, choices, (text, picks) => {
        const source = spell(text, picks);
        expect(JSON.parse(source)).toBe(text); // the generator itself is right
        expectAgrees(Buffer.from(source, "utf8"), 0, text);
      }),
      { numRuns: 3000 },
    );
  });
});

/** Ways to break a literal: raw controls, a backslash before anything, a cut \u escape, a stray quote or backslash. */
const breakage = fc.oneof(
  control,
  fc.oneof(fc.constantFrom(..."\"\\/bfnrtuxU0a'", "é", "😀", "\u2028"), fc.string({ unit: "binary-ascii", minLength: 1, maxLength: 1 })).map((c) => `\\${c}`),
  fc
    .tuple(fc.string({ unit: fc.constantFrom(..."0123456789abcdefABCDEF"), maxLength: 3 }), fc.constantFrom("", "g", "G", "x", '"', " ", "-", "\\", "é"))
    .map(([hex, after]) => `\\u${hex}${after}`),
  fc.constantFrom('"', "\\", "\u007f"),
);

describe("invalid literals", () => {
  const broken = fc
    .tuple(anyText, choices, fc.array(fc.tuple(fc.nat(), breakage), { minLength: 1, maxLength: 3 }), fc.constantFrom("keep", "drop closing quote", "truncate"), fc.nat())
    .map(([text, picks, inserts, ending, cut]) => {
      const chars = Array.from(spell(text, picks)); // code points: inserts never split a character
      for (const [at, what] of inserts) chars.splice(1 + (at % (chars.length - 1)), 0, what);
      if (ending === "drop closing quote") chars.pop();
      if (ending === "truncate") chars.length = 1 + (cut % chars.length);
      return Buffer.from(chars.join(""), "utf8");
    });

  it("fuzz: scanLiteral is undefined exactly when JSON.parse rejects the literal", () => {
    fc.assert(
      fc.property(broken, fc.nat(), (bytes, limitSeed) => {
        const facts = scanLiteral(bytes, 0);
        // The only place a valid literal can end is the first quote not escaped (backslash parity).
        const end = literalEnd(bytes, 0, bytes.length);
        const parsed = end === -1 ? undefined : parseOrUndefined(bytes.subarray(0, end));
        expect(facts === undefined).toBe(parsed === undefined);
        if (end === bytes.length) expect(parseOrUndefined(bytes)).toEqual(parsed);
        if (facts !== undefined) expect(facts).toEqual(expectedFacts(parsed as string, bytes.subarray(0, end)));
        // Any limit: valid exactly when the literal is valid and closes before it.
        const limit = limitSeed % (bytes.length + 1);
        const limited = scanLiteral(bytes, 0, limit);
        expect(limited).toEqual(facts !== undefined && facts.end <= limit ? facts : undefined);
      }),
      { numRuns: 5000 },
    );
  });

  it("fuzz: scanLiteral reads no byte at or past `limit` (not even the hex digits of a cut \\u escape)", () => {
    fc.assert(
      fc.property(broken, fc.nat(), (bytes, limitSeed) => {
        const limit = 1 + (limitSeed % bytes.length);
        const guarded = new Proxy(bytes, {
          get(target, key) {
            if (typeof key === "string" && /^\d+$/.test(key) && Number(key) >= limit) throw new Error(`read byte ${key} past limit ${limit}`);
            return Reflect.get(target, key);
          },
        });
        const facts = scanLiteral(bytes, 0, limit);
        expect(scanLiteral(guarded, 0, limit)).toEqual(facts);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("literals inside a longer line", () => {
  const before = fc.constantFrom("", "x", '{"type":"toolResult","content":[{"type":"text","text":', '["a\\"b", "é😀", ', "\\\\");
  const after = fc.constantFrom("", "}]}", ',"x":"\\"', '"', "\\", "\\u00", ' "😀"');

  it("fuzz: offsets are honoured, in a plain Uint8Array view that does not start its buffer", () => {
    fc.assert(
      fc.property(anyText, choices, before, after, fc.integer({ min: 0, max: 9 }), (text, picks, head, tail, pad) => {
        const source = picks[0]! % 2 === 0 ? JSON.stringify(text) : spell(text, picks);
        const line = Buffer.from(head + source + tail, "utf8");
        const backing = new Uint8Array(pad + line.length);
        backing.set(line, pad);
        const buf = backing.subarray(pad);
        const start = Buffer.byteLength(head, "utf8");
        expect(scanLiteral(buf, start)?.end).toBe(start + Buffer.byteLength(source, "utf8"));
        expectAgrees(buf, start, text);
      }),
      { numRuns: 2000 },
    );
  });
});
