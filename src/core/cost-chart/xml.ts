// Characters XML 1.0 cannot hold at all (C0 controls but tab/LF/CR, U+FFFE/FFFF, lone surrogates).
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

/** Text safe in element content and in quoted attributes; characters XML forbids become U+FFFD. */
export function xmlText(text: string): string {
  return text.replace(NOT_XML, "\uFFFD").replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A coordinate with one decimal, the same bytes for the same value on every run. */
export function coord(v: number): string {
  return String(Math.round(v * 10) / 10);
}

/** `text` cut to `max` code points, an ellipsis marking the cut. */
export function clip(text: string, max: number): string {
  const points = Array.from(text);
  return points.length <= max ? text : `${points.slice(0, max - 1).join("")}\u2026`;
}
