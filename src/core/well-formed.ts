/** Lone UTF-16 surrogates: valid in JS strings and JSON escapes, impossible in UTF-8. */

type WellFormed = string & { isWellFormed(): boolean };

/**
 * True when msgpack would not give `value` back exactly: a lone surrogate (msgpack carries UTF-8)
 * or a `__proto__` key (msgpackr renames it to `__proto_`, a guard against prototype pollution).
 */
export function msgpackAlters(value: unknown): boolean {
  if (typeof value === "string") return !(value as WellFormed).isWellFormed();
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return value.some(msgpackAlters);
  for (const key in value) {
    if (key === "__proto__" || !(key as WellFormed).isWellFormed()) return true;
    if (msgpackAlters((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

/** True when the string has no lone surrogate (it can be written as UTF-8 and read back exactly). */
export function isWellFormedText(text: string): boolean {
  return (text as WellFormed).isWellFormed();
}
