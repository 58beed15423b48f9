/**
 * Pages of one archived output, as pi's `read` tool pages a file: whole lines, at most 2,000 of
 * them and 50 KB, from a 1-based line `offset`. A line longer than a page is read in pieces: an
 * offset `"L:C"` starts at character C (1-based, UTF-16 units) of line L. Each page is an exact
 * slice of the output, so the pages, concatenated, are the output byte for byte; the tool shows a
 * page, one line break, then a note naming the offset of the next page. Pure.
 */

import { isHighSurrogate, isLowSurrogate } from "./json-escapes.js";

/** A page's limits, pi's head truncation limits for tool output: lines, and UTF-8 bytes. */
export const QUERY_MAX_LINES = 2000;
export const QUERY_MAX_BYTES = 51200;

/** Where a page starts: a line, and a character of it (1 = the line's start). */
export interface PagePlace {
  line: number;
  char: number;
}

export interface OutputPage {
  /** The page's text, exactly as it is in the output (a whole line keeps its "\n"). */
  text: string;
  from: PagePlace;
  /** Where the next page starts; null on the last page. */
  next: PagePlace | null;
  /** The last line the page reaches (partly, when it ends inside a line). */
  lastLine: number;
  totalLines: number;
  /** The page ends inside a line longer than a page. */
  endsInsideLine: boolean;
}

export const FIRST_PAGE: PagePlace = { line: 1, char: 1 };

/** `"120"` or `"120:51201"` (also the number 120) as a place; a message saying what is wrong otherwise. */
export function parseOffset(offset: unknown): PagePlace | string {
  const text = typeof offset === "number" ? String(offset) : offset;
  if (typeof text !== "string") return `offset must be a line number like "120", or "120:51201" for a character of line 120`;
  const match = /^\s*(\d+)(?::(\d+))?\s*$/.exec(text);
  const line = match ? Number(match[1]) : NaN;
  const char = match?.[2] === undefined ? 1 : Number(match[2]);
  if (!Number.isSafeInteger(line) || line < 1 || !Number.isSafeInteger(char) || char < 1) {
    return `offset ${JSON.stringify(offset)} is not a line number like "120", nor "120:51201" for a character of line 120 (both 1-based)`;
  }
  return { line, char };
}

/** The offset string that denotes `place`: `"120"`, or `"120:51201"` inside a line. */
export function formatOffset(place: PagePlace): string {
  return place.char === 1 ? String(place.line) : `${place.line}:${place.char}`;
}

/** The page of `output` that starts at `from`; a message when `from` lies past the output's end. */
export function pageOf(output: string, from: PagePlace, maxLines = QUERY_MAX_LINES, maxBytes = QUERY_MAX_BYTES): OutputPage | string {
  const totalLines = countLines(output);
  const lineStart = startOfLine(output, from.line);
  const lineEnd = lineStart === -1 ? -1 : endOfLine(output, lineStart);
  if (lineStart === -1 || lineStart + from.char - 1 > lineEnd) {
    return `offset ${formatOffset(from)} is past the end of the output (${totalLines} line${totalLines === 1 ? "" : "s"})`;
  }
  const start = lineStart + from.char - 1;
  let end = start;
  let lines = 0;
  let bytes = 0;
  let endsInsideLine = false;
  while (lines < maxLines && end < output.length) {
    const next = endOfLine(output, end);
    const nextEnd = next < output.length ? next + 1 : next;
    const lineBytes = Buffer.byteLength(output.slice(end, nextEnd), "utf8");
    if (bytes + lineBytes > maxBytes) {
      if (lines === 0) {
        end = cutAtBytes(output, end, maxBytes);
        endsInsideLine = true;
      }
      break;
    }
    bytes += lineBytes;
    end = nextEnd;
    lines++;
  }
  const nextPlace = end >= output.length ? null : placeOf(output, end, from.line, lineStart);
  const lastLine = nextPlace === null ? totalLines : nextPlace.char === 1 ? nextPlace.line - 1 : nextPlace.line;
  return { text: output.slice(start, end), from, next: nextPlace, lastLine: Math.max(from.line, lastLine), totalLines, endsInsideLine };
}

function countLines(text: string): number {
  let lines = 1;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines++;
  return lines;
}

/** Index of the first character of 1-based `line`, or -1 when the output has fewer lines. */
function startOfLine(text: string, line: number): number {
  let at = 0;
  for (let current = 1; current < line; current++) {
    const newline = text.indexOf("\n", at);
    if (newline === -1) return -1;
    at = newline + 1;
  }
  return at;
}

/** Index of the "\n" that ends the line holding `at`, or the output's length. */
function endOfLine(text: string, at: number): number {
  const newline = text.indexOf("\n", at);
  return newline === -1 ? text.length : newline;
}

/** The index `maxBytes` UTF-8 bytes after `start` (or fewer), never inside a surrogate pair; at least one character. */
function cutAtBytes(text: string, start: number, maxBytes: number): number {
  let bytes = 0;
  let at = start;
  while (at < text.length) {
    const code = text.charCodeAt(at);
    const pair = isHighSurrogate(code) && at + 1 < text.length && isLowSurrogate(text.charCodeAt(at + 1));
    const size = pair ? 4 : code < 0x80 ? 1 : code < 0x800 ? 2 : 3;
    if (bytes + size > maxBytes && at > start) break;
    bytes += size;
    at += pair ? 2 : 1;
  }
  return at;
}

/** The place of index `at`, counting lines from `fromLine`, whose first character is at `fromLineStart`. */
function placeOf(text: string, at: number, fromLine: number, fromLineStart: number): PagePlace {
  let line = fromLine;
  let lineStart = fromLineStart;
  for (let newline = text.indexOf("\n", lineStart); newline !== -1 && newline < at; newline = text.indexOf("\n", lineStart)) {
    line++;
    lineStart = newline + 1;
  }
  return { line, char: at - lineStart + 1 };
}

/** What a note says to pass for the next page of `ref` (formatOffset writes `offset`). */
export function nextPageHint(ref: string, offset: string): string {
  return `next page: context_tree_query {"toolCallIds":["${ref}"],"offset":"${offset}"}`;
}

/** The line that ends a page: what it showed, and exactly what to pass for the next page. */
export function pageNote(ref: string, page: OutputPage): string {
  const lines = page.from.line === page.lastLine ? `line ${page.from.line}` : `lines ${page.from.line}-${page.lastLine}`;
  const within = page.endsInsideLine || page.from.char > 1 ? ` (from character ${page.from.char} of line ${page.from.line}${page.endsInsideLine ? `; the page ends inside line ${page.lastLine}` : ""})` : "";
  const where = `[Page of ${ref}: ${lines} of ${page.totalLines}${within}`;
  if (page.next === null) return `${where}; end of output]`;
  return `${where}; ${nextPageHint(ref, formatOffset(page.next))}]`;
}

/**
 * The tool's text for a page: the page exactly, one line break, then its note. The page is what
 * comes before that last line break, always, whether or not the page itself ends a line.
 */
export function pageText(ref: string, page: OutputPage): string {
  return `${page.text}\n${pageNote(ref, page)}`;
}
