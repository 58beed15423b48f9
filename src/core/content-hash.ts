/**
 * Upstream's dedup content hash (reference §3.2): SHA-1 hex over the tool name, a NUL byte and the
 * normalised output (CRLF to LF, trailing blanks stripped per line, whole text trimmed).
 * Kept bit-compatible so pi-condense and chainpress agree on `contentHash`.
 */

import { createHash } from "node:crypto";

export function normalizeResultText(text: string): string {
  return text
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map((line) => line.replace(/[ \t]+$/, ""))
    .join("\n")
    .trim();
}

export function contentHash(toolName: string, resultText: string): string {
  return createHash("sha1").update(toolName, "utf8").update("\0").update(normalizeResultText(resultText), "utf8").digest("hex");
}
