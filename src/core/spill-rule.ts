import { isWellFormedText } from "./well-formed-text.js";

/**
 * Whether an output is spilled to its own file: upstream's rule (length ≥ threshold), except for
 * text with a lone surrogate. UTF-8 cannot carry it, so a spill file would return U+FFFD; kept
 * inline, JSON stores it exactly.
 */
export function shouldSpill(text: string, threshold: number): boolean {
  // The well-formedness scan only for text long enough to matter.
  return text.length >= threshold && spillsMeasured(text.length, isWellFormedText(text), threshold);
}

/** The same rule for text known by its measure: UTF-16 `units`, and whether it is well-formed. */
export function spillsMeasured(units: number, wellFormed: boolean, threshold: number): boolean {
  return units >= threshold && wellFormed;
}
