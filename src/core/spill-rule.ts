import { isWellFormedText } from "./well-formed.js";

/**
 * Whether an output is spilled to its own file: upstream's rule (length ≥ threshold), except for
 * text with a lone surrogate. UTF-8 cannot carry it, so a spill file would return U+FFFD; kept
 * inline, JSON stores it exactly.
 */
export function shouldSpill(text: string, threshold: number): boolean {
  return text.length >= threshold && isWellFormedText(text);
}
