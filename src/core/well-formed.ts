/** Lone UTF-16 surrogates: valid in JS strings and JSON escapes, impossible in UTF-8. */

type WellFormed = string & { isWellFormed(): boolean };

/** True when any string inside `value` (deeply) holds a lone surrogate. */
export function containsLoneSurrogate(value: unknown): boolean {
  if (typeof value === "string") return !(value as WellFormed).isWellFormed();
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return value.some(containsLoneSurrogate);
  for (const key in value) {
    if (!(key as WellFormed).isWellFormed()) return true;
    if (containsLoneSurrogate((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

/** True when the string has no lone surrogate (it can be written as UTF-8 and read back exactly). */
export function isWellFormedText(text: string): boolean {
  return (text as WellFormed).isWellFormed();
}
