/**
 * Independent reading of lines that hold several JSON objects written back to back (a lost
 * newline, seen in real pi sessions), without the reader's logic.
 */

export function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Cut at every "}{" where the text so far parses. Undefined unless every piece parses. */
export function splitConcatenated(text: string): string[] | undefined {
  const pieces: string[] = [];
  let start = 0;
  for (let at = text.indexOf("}{"); at !== -1; at = text.indexOf("}{", at + 1)) {
    if (!parses(text.slice(start, at + 1))) continue;
    pieces.push(text.slice(start, at + 1));
    start = at + 1;
  }
  const last = text.slice(start);
  return pieces.length > 0 && parses(last) ? [...pieces, last] : undefined;
}
