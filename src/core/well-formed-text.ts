/** Lone UTF-16 surrogates: valid in JS strings and JSON escapes, impossible in UTF-8. */

type WellFormed = string & { isWellFormed(): boolean };

/** True when the string has no lone surrogate (it can be written as UTF-8 and read back exactly). */
export function isWellFormedText(text: string): boolean {
  return (text as WellFormed).isWellFormed();
}
