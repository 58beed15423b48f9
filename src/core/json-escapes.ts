/**
 * What JSON's string escapes are, as tables indexed by byte, and what a \u escape spells: shared by
 * the JavaScript passes over a literal's bytes (core/json-literal.ts, core/unescape-literal.ts)
 * and their WebAssembly kernel (core/literal-kernel.ts copies the tables into its memory), so
 * each fact is written once.
 */

/** Per byte after a backslash, the code unit of that two-character escape; -1 for `u` and for what JSON.parse rejects. */
export const SHORT_ESCAPE = (() => {
  const table = new Int32Array(256).fill(-1);
  const escapes: Array<[string, number]> = [['"', 0x22], ["\\", 0x5c], ["/", 0x2f], ["b", 0x08], ["f", 0x0c], ["n", 0x0a], ["r", 0x0d], ["t", 0x09]];
  for (const [letter, unit] of escapes) table[letter.charCodeAt(0)] = unit;
  return table;
})();

/** Per byte, its value as a hex digit (either case), or -1. */
export const HEX_DIGIT = (() => {
  const table = new Int32Array(256).fill(-1);
  for (let digit = 0; digit < 16; digit++) {
    table[digit.toString(16).charCodeAt(0)] = digit;
    table[digit.toString(16).toUpperCase().charCodeAt(0)] = digit;
  }
  return table;
})();

/** Per code unit below 0x80, the JSON characters JSON.stringify writes for it: 2 for `\"` `\\` `\b` `\f` `\n` `\r` `\t`, 6 for the other controls, else 1. */
export const ASCII_JSON_CHARS = (() => {
  const table = new Uint8Array(0x80).fill(1);
  for (let unit = 0; unit < 0x20; unit++) table[unit] = 6;
  for (const unit of [0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x22, 0x5c]) table[unit] = 2;
  return table;
})();

/** The code unit spelt by the four hex digits at `at`, or -1 when one is not a hex digit. */
export function hexUnit(bytes: Uint8Array, at: number): number {
  const a = HEX_DIGIT[bytes[at]!]!;
  const b = HEX_DIGIT[bytes[at + 1]!]!;
  const c = HEX_DIGIT[bytes[at + 2]!]!;
  const d = HEX_DIGIT[bytes[at + 3]!]!;
  return (a | b | c | d) < 0 ? -1 : (a << 12) | (b << 8) | (c << 4) | d;
}

export function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

export function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}
