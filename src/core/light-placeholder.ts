/**
 * The placeholder that stands for what a lightened string lost (core/light-value.ts): it carries
 * how many JSON characters it stands in for, so a value's real JSON length can be had from its
 * lightened form alone.
 */

import { jsonText } from "./json-text.js";

/**
 * Placeholder delimiters: the C1 control codes PU1 and PU2 ("private use"), which real text all
 * but never holds and JSON.stringify leaves as they are. Below U+0100, they keep a lightened head
 * a one-byte string in V8, where private-use code points (U+E000) would make every head two bytes
 * a character.
 */
const OPEN = "\u0091";
const CLOSE = "\u0092";
const PLACEHOLDER = /\u0091(\d+)\u0092/g;

/** Longest placeholder: two delimiters and up to 16 digits. */
export const PLACEHOLDER_MAX_CHARS = 18;

/**
 * A placeholder standing for `extra` JSON characters, its own included: its length plus the
 * number it carries is `extra`.
 */
export function placeholderWorth(extra: number): string {
  const missing = extra - OPEN.length - CLOSE.length;
  let digits = 1;
  while (String(missing - digits).length > digits) digits++;
  return `${OPEN}${String(missing - digits).padStart(digits, "0")}${CLOSE}`;
}

/**
 * `JSON.stringify(text).length`. Most strings need no escape at all (ids, names, timestamps,
 * plain text): one regular-expression test finds that without building the quoted copy, and
 * only the others are serialised (V8's native escaping beats a JavaScript character loop on them).
 */
export function jsonStringLength(text: string): number {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text).length : text.length + 2;
}

/** What JSON.stringify changes in a string: quote, backslash, control characters, surrogates (a lone one is escaped). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON characters the placeholders inside `json` stand in for (0 when it has none). */
export function placeholderChars(json: string): number {
  if (!json.includes(OPEN)) return 0;
  let extra = 0;
  for (const match of json.matchAll(PLACEHOLDER)) extra += Number(match[1]);
  return extra;
}

/** JSON length of a (possibly lightened) value as the real value would serialise. */
export function realJsonLength(value: unknown): number {
  const json = jsonText(value);
  if (json === undefined) return 0;
  // A string holds its JSON's placeholders (JSON.stringify leaves the delimiters as they are), so
  // the common case, a string without any, is answered without scanning the JSON just built.
  if (typeof value === "string" && !value.includes(OPEN)) return json.length;
  return json.length + placeholderChars(json);
}
