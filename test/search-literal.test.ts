/**
 * A literal search is never a regular expression (core/literal-find.ts): it finds what the
 * expression of its escaped text found, the same hits, scores and lines, checked against that
 * expression on fuzzed Unicode text, and it finds a text of any length, 100,000 characters and
 * more, in a real compacted session through worker threads and `chainpress query --search`.
 * Messages quote a huge pattern capped.
 */

import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPattern, PatternMatcher, QUOTED_PATTERN_CHARS, searchOutput, type SearchDoc, type SearchPattern, type TextMatcher } from "../src/core/archive-search.js";
import { LiteralFinder } from "../src/core/literal-find.js";
import { canonicalUnit, unitsFoldingTo } from "../src/core/regex-case-fold.js";
import { createChainRunner } from "../src/main/chain-runner.js";
import { searchArchive } from "../src/main/search-archive.js";
import { loadSessionModel } from "../src/main/session-model.js";
import { ensureBuilt, removeTempDirs, runCli, tempDir } from "./helpers/cli-harness.js";
import { SessionLines } from "./helpers/session-lines.js";

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

/** The literal as an expression, as the search compiled it before: the oracle. */
function literalExpression(text: string, caseSensitive: boolean): RegExp {
  return new RegExp(text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"), caseSensitive ? "gm" : "gmi");
}

function expressionStarts(re: RegExp, haystack: string): number[] {
  const starts: number[] = [];
  re.lastIndex = 0;
  for (let match = re.exec(haystack); match !== null; match = re.exec(haystack)) starts.push(match.index);
  return starts;
}

/** The search's matcher before this change, for a literal: its escaped text as an expression. */
class ExpressionMatcher implements TextMatcher {
  private readonly re: RegExp;
  constructor(readonly pattern: Extract<SearchPattern, { kind: "literal" }>) {
    this.re = literalExpression(pattern.text, pattern.caseSensitive);
  }
  test(text: string): boolean {
    this.re.lastIndex = 0;
    return this.re.test(text);
  }
  *matches(text: string): Generator<[number, number]> {
    for (const at of expressionStarts(this.re, text)) yield [at, this.pattern.text.length];
  }
}

/** Units the folding treats specially: ß, İ, ı, ſ, the Kelvin sign, the sigmas, µ, ÿ, ǅ, astral characters, lone surrogates. */
const SPECIAL = ["a", "A", "s", "S", "k", "K", "i", "I", "\u00df", "\u1e9e", "\u0130", "\u0131", "\u017f", "\u212a", "\u03a3", "\u03c3", "\u03c2", "\u00b5", "\u039c", "\u00ff", "\u0178", "\u01c4", "\u01c5", "\u01c6", "\u1fb3", "\u0345", "\u0399", "\u{1F600}", "\u{10400}", "\u{10428}", "\ud801", "\udc28", "\ud800", "\udc00", " ", "\n", "."];
const unit = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...SPECIAL) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)) });
const haystack = fc.string({ unit, maxLength: 80 });
/** A needle: random, or a piece of the haystack with its case changed here and there. */
const needleIn = (text: string) =>
  fc.oneof(
    fc.string({ unit, minLength: 1, maxLength: 4 }),
    fc.tuple(fc.nat(text.length), fc.integer({ min: 1, max: 6 }), fc.array(fc.boolean(), { minLength: 6, maxLength: 6 })).map(([from, length, upper]) => {
      const piece = [...text.slice(from, from + length)].map((char, i) => (upper[i % 6] ? char.toUpperCase() : char.toLowerCase())).join("");
      return piece === "" ? "a" : piece;
    }),
  );
const pairs = haystack.chain((text) => fc.tuple(fc.constant(text), needleIn(text), fc.boolean()));

describe("a literal is found where its expression matched", () => {
  it("each code unit folds as the `i` flag folds it, for every unit with a case mapping", () => {
    let all = "";
    for (let code = 0; code <= 0xffff; code++) all += String.fromCharCode(code);
    const cased = [...all].filter((char) => char.toUpperCase() !== char || char.toLowerCase() !== char);
    expect(cased.length).toBeGreaterThan(2_000);
    for (const char of cased) {
      const code = char.charCodeAt(0);
      expect(unitsFoldingTo(canonicalUnit(code)), code.toString(16)).toEqual(expressionStarts(literalExpression(char, false), all));
    }
  });

  it("the same starts as the expression, on fuzzed Unicode text, in both cases", () => {
    fc.assert(
      fc.property(pairs, ([text, needle, caseSensitive]) => {
        expect([...new LiteralFinder(needle, caseSensitive).starts(text)]).toEqual(expressionStarts(literalExpression(needle, caseSensitive), text));
      }),
      { numRuns: 5_000 },
    );
  });

  it("the same hits, scores and matching lines as the expression", () => {
    const doc = (argsJson: string): SearchDoc => ({ ref: "t1", toolCallId: "c1", toolName: "bash", target: "src/x.ts", blockId: "b1", argsJson, order: 3 });
    fc.assert(
      fc.property(pairs, haystack, ([text, needle, caseSensitive], args) => {
        const pattern = { kind: "literal" as const, text: needle, caseSensitive };
        const output = `${text}\n${needle}\n${text}`;
        expect(searchOutput(doc(args), output, new PatternMatcher(pattern))).toEqual(searchOutput(doc(args), output, new ExpressionMatcher(pattern)));
      }),
      { numRuns: 2_000 },
    );
  });

  it("repeated and self-overlapping texts: matches do not overlap, and a failed partial match is rescanned", () => {
    for (const [needle, text] of [
      ["aa", "AAAAA"],
      ["aAb", "aaAaAAb"],
      ["\u03c3\u03c3\u03c2", "\u03a3\u03c3\u03a3\u03c3\u03c3\u03c2"],
      ["abab", "xABABABx"],
      ["K", "k\u212aK"],
      ["\u00df", "SS\u1e9e\u00df"],
    ] as const) {
      for (const caseSensitive of [false, true]) expect([...new LiteralFinder(needle, caseSensitive).starts(text)], `${needle} ${caseSensitive}`).toEqual(expressionStarts(literalExpression(needle, caseSensitive), text));
    }
  });
});

describe("a literal of any length", () => {
  const words = ["alpha", "Beta", "gamma", "DELTA", "epsilon", "\u03a3igma", "\u00e9t\u00e9", "\u{1F600}", "zeta", "eta"];
  /** A 130,000-character line of pseudo-random words, the same every run. */
  const longLine = (() => {
    let seed = 7;
    let line = "";
    while (line.length < 130_000) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      line += `${words[seed % words.length]}${seed % 97} `;
    }
    return line.slice(0, 130_000);
  })();
  const needle = longLine.slice(10_000, 110_000);
  const asciiUpper = (text: string) => text.replace(/[a-z]/g, (char) => char.toUpperCase());
  const absent = `${needle.slice(0, 50_000)}#${needle.slice(50_001)}`;
  let file: string;

  beforeAll(() => {
    file = path.join(tempDir("chainpress-search-literal-"), "s.jsonl");
    const s = new SessionLines();
    // Long enough that compressing the chain shrinks the context (core/chain-shrink.ts).
    s.chain("one", [`a short output\n${"filler line\n".repeat(60)}`]);
    s.reply("one done");
    s.chain("two", [`head\n${longLine}\ntail`, "another short one"]);
    s.reply("two done");
    s.write(file);
    const run = runCli(["compact", file, "--workers", "0"]);
    expect(run.status, run.stderr).toBe(0);
  });

  it("a 100,000-character literal is found in a spilled output on a worker thread, in either case; one not there is not", async () => {
    expect(needle.length).toBe(100_000);
    const model = await loadSessionModel(file);
    const runner = createChainRunner(1);
    try {
      const search = (text: string, caseSensitive: boolean) => searchArchive({ state: model.state, editedOutputs: new Map(), runner, blobDir: model.blobDir }, { pattern: checkPattern(text, false, caseSensitive) as SearchPattern, limit: 10 });
      for (const [text, caseSensitive] of [[needle, true], [needle, false], [asciiUpper(needle), false]] as const) {
        const found = await search(text, caseSensitive);
        expect(found.hits.map((hit) => [hit.ref, hit.matches, hit.lines[0]!.line]), `${caseSensitive}`).toEqual([["t2", 1, 2]]);
      }
      expect((await search(asciiUpper(needle), true)).total).toBe(0);
      expect((await search(absent, false)).total).toBe(0);
      const whole = await search(asciiUpper(longLine), false);
      expect(whole.hits.map((hit) => [hit.ref, hit.wholeLine])).toEqual([["t2", true]]);
    } finally {
      await runner.close();
    }
  });

  it("`chainpress query --search` finds it and quotes it capped", () => {
    const json = runCli(["query", file, "--json", "--search", asciiUpper(needle)]);
    expect(json.status, json.stderr).toBe(0);
    expect((JSON.parse(json.out) as { hits: Array<{ ref: string }> }).hits.map((hit) => hit.ref)).toEqual(["t2"]);
    const text = runCli(["query", file, "--search", absent]);
    expect([text.status, text.stderr]).toEqual([0, ""]);
    expect(text.out).toBe(`Search ${JSON.stringify(absent.slice(0, QUOTED_PATTERN_CHARS))}… (100,000 characters) (literal, case-insensitive): 0 hits in 3 archived outputs.\n`);
  });
});

describe("messages quote a huge pattern capped", () => {
  it("an expression too large to compile is refused before the search, quoted capped", () => {
    const message = checkPattern("x".repeat(40_000), true);
    expect(message).toBe(`invalid regular expression "${"x".repeat(QUOTED_PATTERN_CHARS)}"… (40,000 characters): Regular expression too large`);
    const run = runCli(["query", "/nonexistent/never-read.jsonl", "--search", "y".repeat(40_000), "--regex"]);
    expect(run.stderr.length).toBeLessThan(1_000);
    expect(run.stderr).toContain("Regular expression too large");
  });

  it("an expression that fails to compile mid-search says why, quoted capped", () => {
    const matcher = new PatternMatcher({ kind: "regex", source: "z".repeat(40_000), caseSensitive: false });
    let failure: unknown;
    try {
      matcher.test("some text");
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(SyntaxError);
    expect((failure as Error).message).toBe(`invalid regular expression "${"z".repeat(QUOTED_PATTERN_CHARS)}"… (40,000 characters): Regular expression too large`);
  });

  it("a short pattern is quoted whole, once (not again inside V8's own message)", () => {
    expect(checkPattern("(unclosed", true)).toBe('invalid regular expression "(unclosed": Unterminated group');
  });
});
