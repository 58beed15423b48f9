/**
 * Case folding as a JavaScript regular expression with the `i` flag and without `u` does it: two
 * UTF-16 code units match when their canonical units are equal (ECMA-262 Canonicalize: the unit's
 * toUpperCase, unless that is not one unit, or maps a non-ASCII unit to ASCII). Unit by unit, so
 * an astral character or a lone surrogate matches only itself. Pure; the table fills lazily.
 */

/** Canonical unit by code unit; 0 until computed (only U+0000 is its own canonical 0). */
const canonical = new Uint16Array(0x10000);

/** The canonical unit of `unit` (0..0xFFFF). */
export function canonicalUnit(unit: number): number {
  return canonical[unit] || computeCanonical(unit);
}

function computeCanonical(unit: number): number {
  const upper = String.fromCharCode(unit).toUpperCase();
  const folded = upper.length !== 1 || (unit >= 0x80 && upper.charCodeAt(0) < 0x80) ? unit : upper.charCodeAt(0);
  canonical[unit] = folded;
  return folded;
}

/** Every code unit whose canonical unit is `folded`, ascending. */
export function unitsFoldingTo(folded: number): number[] {
  // No unit at or above 0x80 folds to one below it, and below 0x80 only a-z fold (to A-Z).
  const last = folded < 0x80 ? 0x7f : 0xffff;
  const units: number[] = [];
  for (let unit = 0; unit <= last; unit++) if (canonicalUnit(unit) === folded) units.push(unit);
  return units;
}
