/**
 * Searching archived outputs: what a search asks (a literal, case-insensitive by default, or a
 * regular expression), and what one archived output gives for it (its matches, scored, with a
 * few matching lines and their numbers). Pure: the worker reads spill files and calls this; the
 * main thread ranks and formats (core/search-report.ts).
 *
 * Filters (tools, chain, `hasImages`) choose the documents before they are searched
 * (main/search-archive.ts). A listing (`{"hasImages": true}` without text) searches for nothing:
 * each document it keeps is a hit of score 0 (listedOutput), so the ranking puts them newest
 * first. A hit on an output with non-text parts carries what they are (`parts`), added on the
 * main thread from the record (core/part-notes.ts).
 */

import { digitGroups } from "./digit-groups.js";
import { isHighSurrogate } from "./json-escapes.js";
import { LiteralFinder } from "./literal-find.js";
import type { PartsNote } from "./part-notes.js";

/** What the model or the command line asked for, checked. */
export type SearchPattern = { kind: "literal"; text: string; caseSensitive: boolean } | { kind: "regex"; source: string; caseSensitive: boolean };

/** One archived output to search: its output text and the args of its call. */
export interface SearchDoc {
  ref: string;
  toolCallId: string;
  toolName: string;
  /** The call's target as the archive map names it (core/call-target.ts). */
  target: string;
  /** The compressed chain it belongs to; null for an open chain's archived output. */
  blockId: string | null;
  /** The call's args as JSON: a search for a path finds the calls on it. */
  argsJson: string;
  /** Position in the archive, oldest first: the tie-break of equal scores (newest first). */
  order: number;
}

export interface SearchHit {
  ref: string;
  toolCallId: string;
  toolName: string;
  target: string;
  blockId: string | null;
  /** UTF-16 units of the output. */
  chars: number;
  /** Matches in the output (counting stops at MAX_COUNTED_MATCHES). */
  matches: number;
  /** The call's args match too. */
  inArgs: boolean;
  /** Some line of the output is exactly what was searched (a literal search). */
  wholeLine: boolean;
  /** The first matching lines, 1-based, each cut around its match. */
  lines: Array<{ line: number; text: string }>;
  score: number;
  order: number;
  /** The output's non-text parts, when it has some an edit did not hide: set for the hits shown. */
  parts?: PartsNote;
}

/** Matching lines kept per hit. */
export const LINES_PER_HIT = 3;
/** A matching line is cut to about this many characters around its match. */
export const LINE_EXCERPT_CHARS = 160;
const MAX_COUNTED_MATCHES = 10_000;

/** Characters of a pattern an error or a report quotes; a longer one is cut, with its length. */
export const QUOTED_PATTERN_CHARS = 200;

/** The search pattern, or a message saying what is wrong with it (an empty text, an invalid expression). */
export function checkPattern(text: unknown, regex: boolean, caseSensitive = false): SearchPattern | string {
  if (typeof text !== "string" || text.trim() === "") return "search text is empty: give the words or the expression to find";
  if (!regex) return { kind: "literal", text, caseSensitive };
  try {
    // V8 compiles an expression at its first use: one too large to compile fails here, not mid-search.
    new RegExp(text, regexFlags(caseSensitive)).test("");
  } catch (error) {
    return regexError(text, error);
  }
  return { kind: "regex", source: text, caseSensitive };
}

/**
 * `text` as a message quotes it (`quote` adds the quotes): whole up to QUOTED_PATTERN_CHARS, else
 * its start and its length, so a huge pattern is never echoed back whole.
 */
export function quotedPattern(text: string, quote: (shown: string) => string = JSON.stringify): string {
  if (text.length <= QUOTED_PATTERN_CHARS) return quote(text);
  const end = isHighSurrogate(text.charCodeAt(QUOTED_PATTERN_CHARS - 1)) ? QUOTED_PATTERN_CHARS - 1 : QUOTED_PATTERN_CHARS;
  return `${quote(text.slice(0, end))}… (${digitGroups(text.length)} characters)`;
}

function regexFlags(caseSensitive: boolean): string {
  return caseSensitive ? "gm" : "gmi";
}

/** What is wrong with expression `source`, quoting it capped (V8's own message holds it whole). */
function regexError(source: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const echo = `Invalid regular expression: /${source}/`;
  const reason = message.startsWith(echo) ? message.slice(message.indexOf(": ", echo.length) + 2) : quotedPattern(message, String);
  return `invalid regular expression ${quotedPattern(source)}: ${reason}`;
}

/** What searchOutput needs of a pattern: whether a text matches, and where. */
export interface TextMatcher {
  readonly pattern: SearchPattern;
  /** True when the text holds a match (an empty one included). */
  test(text: string): boolean;
  /** Start index and length of each match, in order; one walk at a time. */
  matches(text: string): Iterable<[number, number]>;
}

/**
 * A pattern compiled once for a whole search. A literal is never an expression: it is found as
 * text, of any length (core/literal-find.ts), where the expression of its escaped text would match.
 */
export class PatternMatcher implements TextMatcher {
  private readonly find: LiteralFinder | RegExp;

  constructor(readonly pattern: SearchPattern) {
    this.find = pattern.kind === "literal" ? new LiteralFinder(pattern.text, pattern.caseSensitive) : new RegExp(pattern.source, regexFlags(pattern.caseSensitive));
  }

  test(text: string): boolean {
    const { find } = this;
    if (find instanceof LiteralFinder) return find.test(text);
    find.lastIndex = 0;
    try {
      return find.test(text);
    } catch (error) {
      throw this.failure(error);
    }
  }

  *matches(text: string): Generator<[number, number]> {
    const { find } = this;
    if (find instanceof LiteralFinder) {
      for (const at of find.starts(text)) yield [at, find.text.length];
      return;
    }
    find.lastIndex = 0;
    try {
      for (let match = find.exec(text); match !== null; match = find.exec(text)) {
        yield [match.index, match[0].length];
        // An empty match would match again at the same place.
        if (match[0].length === 0) find.lastIndex++;
      }
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** V8 compiles an expression again for another kind of text: one too large can fail then, quoted capped. */
  private failure(error: unknown): unknown {
    return error instanceof SyntaxError && this.pattern.kind === "regex" ? new SyntaxError(regexError(this.pattern.source, error)) : error;
  }
}

/** What `output` (with its call `doc`) gives for the pattern; undefined when nothing matches. */
export function searchOutput(doc: SearchDoc, output: string, matcher: TextMatcher): SearchHit | undefined {
  const { pattern } = matcher;
  const inArgs = matcher.test(doc.argsJson) || matcher.test(doc.target);
  const lines: Array<{ line: number; text: string }> = [];
  let matches = 0;
  let lineNumber = 1;
  let counted = 0;
  let lastLine = -1;
  let wholeLine = false;
  let exactCase = false;
  for (const [at, length] of matcher.matches(output)) {
    matches++;
    if (lines.length < LINES_PER_HIT) {
      lineNumber += countNewlines(output, counted, at);
      counted = at;
      if (lineNumber !== lastLine) {
        lines.push({ line: lineNumber, text: excerpt(output, at, length) });
        lastLine = lineNumber;
      }
    }
    if (pattern.kind === "literal") {
      wholeLine ||= isWholeLine(output, at, length);
      // Between equal case-insensitive finds, the one with the very text searched for goes first.
      exactCase ||= !pattern.caseSensitive && output.startsWith(pattern.text, at);
    }
    if (matches >= MAX_COUNTED_MATCHES) break;
  }
  if (matches === 0 && !inArgs) return undefined;
  const hit = { ref: doc.ref, toolCallId: doc.toolCallId, toolName: doc.toolName, target: doc.target, blockId: doc.blockId, chars: output.length, matches, inArgs, wholeLine, lines, order: doc.order };
  return { ...hit, score: scoreOf(hit, pattern) + (exactCase ? 500 : 0) };
}

/** A listing's hit: every output it keeps, unscored, so the ranking puts them newest first. */
export function listedOutput(doc: SearchDoc, output: string): SearchHit {
  const { ref, toolCallId, toolName, target, blockId, order } = doc;
  return { ref, toolCallId, toolName, target, blockId, chars: output.length, matches: 0, inArgs: false, wholeLine: false, lines: [], score: 0, order };
}

/**
 * Best first: an output holding the text as a whole line of its own, then calls whose args name
 * it (a path), then by how often it occurs, denser outputs first. Deterministic: equal scores go
 * newest first.
 */
function scoreOf(hit: Omit<SearchHit, "score">, pattern: SearchPattern): number {
  const exactLine = hit.wholeLine ? 4_000 : 0;
  const args = hit.inArgs ? 2_000 : 0;
  const frequency = 100 * Math.log2(1 + hit.matches);
  const density = hit.matches === 0 ? 0 : 50 * Math.min(1, (hit.matches * (pattern.kind === "literal" ? pattern.text.length : 1) * 50) / Math.max(1, hit.chars));
  return Math.round(exactLine + args + frequency + density);
}

export function compareHits(a: SearchHit, b: SearchHit): number {
  return b.score - a.score || b.order - a.order;
}

function countNewlines(text: string, from: number, to: number): number {
  let count = 0;
  for (let at = text.indexOf("\n", from); at !== -1 && at < to; at = text.indexOf("\n", at + 1)) count++;
  return count;
}

/** The line holding a match, cut to about LINE_EXCERPT_CHARS around it ("…" where cut). */
function excerpt(text: string, at: number, length: number): string {
  const start = text.lastIndexOf("\n", at - 1) + 1;
  const newline = text.indexOf("\n", at);
  const end = newline === -1 ? text.length : newline;
  if (end - start <= LINE_EXCERPT_CHARS) return text.slice(start, end);
  const from = Math.max(start, at - Math.floor((LINE_EXCERPT_CHARS - length) / 2));
  const to = Math.min(end, from + Math.max(LINE_EXCERPT_CHARS, length));
  return `${from > start ? "…" : ""}${text.slice(from, to)}${to < end ? "…" : ""}`;
}

/** The match is its line's whole text, apart from blanks around it. */
function isWholeLine(text: string, at: number, length: number): boolean {
  const start = text.lastIndexOf("\n", at - 1) + 1;
  const newline = text.indexOf("\n", at + length);
  const end = newline === -1 ? text.length : newline;
  return text.slice(start, at).trim() === "" && text.slice(at + length, end).trim() === "";
}
