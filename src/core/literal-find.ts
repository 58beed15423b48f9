/**
 * The occurrences of a literal text, left to right and not overlapping, exactly where a global
 * regular expression of its escaped text (flags `gm`, or `gmi` for any case) finds them, for a
 * text of any length: no expression is compiled. Case-sensitive: indexOf. Any case: the
 * Knuth-Morris-Pratt walk over canonical units (core/regex-case-fold.ts), which skips with indexOf
 * to the next unit that can start a match; linear in the text, no allocation per character. Pure.
 */

import { canonicalUnit, unitsFoldingTo } from "./regex-case-fold.js";

export class LiteralFinder {
  /** Canonical units of the text (any case only). */
  private readonly folded: Uint16Array;
  /** For each prefix length - 1, the longest proper border of that prefix (any case only). */
  private readonly border: Int32Array;
  /** The units a match can start with, as one-unit strings for indexOf (any case only). */
  private readonly firstUnits: string[];

  constructor(
    readonly text: string,
    readonly caseSensitive: boolean,
  ) {
    const length = caseSensitive ? 0 : text.length;
    this.folded = new Uint16Array(length);
    for (let at = 0; at < length; at++) this.folded[at] = canonicalUnit(text.charCodeAt(at));
    this.border = borders(this.folded);
    this.firstUnits = length === 0 ? [] : unitsFoldingTo(this.folded[0]!).map((unit) => String.fromCharCode(unit));
  }

  /** True when `haystack` holds the text. */
  test(haystack: string): boolean {
    return !this.starts(haystack).next().done;
  }

  /** The start index of each occurrence, in order; the next search begins where one ends. */
  starts(haystack: string): Generator<number> {
    return this.caseSensitive ? exactStarts(haystack, this.text) : this.foldedStarts(haystack);
  }

  private *foldedStarts(haystack: string): Generator<number> {
    const { folded, border } = this;
    const length = folded.length;
    const nextFirst = firstUnitSkipper(haystack, this.firstUnits);
    let matched = 0;
    for (let at = 0; ; ) {
      if (matched === 0) {
        at = nextFirst(at);
        if (at === -1) return;
        matched = 1;
        at++;
      } else {
        if (at >= haystack.length) return;
        const unit = canonicalUnit(haystack.charCodeAt(at));
        while (matched > 0 && unit !== folded[matched]) matched = border[matched - 1]!;
        if (unit === folded[matched]) matched++;
        at++;
      }
      if (matched === length) {
        yield at - length;
        matched = 0;
      }
    }
  }
}

function* exactStarts(haystack: string, text: string): Generator<number> {
  for (let at = haystack.indexOf(text); at !== -1; at = haystack.indexOf(text, at + text.length)) yield at;
}

/** Knuth-Morris-Pratt's failure table of `units`. */
function borders(units: Uint16Array): Int32Array {
  const border = new Int32Array(units.length);
  for (let at = 1, length = 0; at < units.length; at++) {
    while (length > 0 && units[at] !== units[length]) length = border[length - 1]!;
    if (units[at] === units[length]) length++;
    border[at] = length;
  }
  return border;
}

/**
 * The first index at or after a given one (asked in increasing order) where `haystack` holds one
 * of `units`, or -1. Each unit's next place is kept until passed, so each is scanned for once
 * across the whole walk.
 */
function firstUnitSkipper(haystack: string, units: readonly string[]): (from: number) => number {
  const next = units.map(() => -2);
  return (from) => {
    let first = -1;
    for (let i = 0; i < units.length; i++) {
      let place = next[i]!;
      if (place !== -1 && place < from) next[i] = place = haystack.indexOf(units[i]!, from);
      if (place !== -1 && (first === -1 || place < first)) first = place;
    }
    return first;
  };
}
