// The multi-pass implementation that src/core/content-hash.ts replaced, kept verbatim as the test
// oracle (and the benchmark's "before"). It is a direct transcription of UPSTREAM-FORMAT.md §3.2:
// CRLF → LF, split on LF, strip [ \t]+$ per line, rejoin, JS trim(); SHA-1 over name, NUL, text.
import { createHash } from "node:crypto";

export function referenceNormalizeResultText(text: string): string {
  return text
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map((line) => line.replace(/[ \t]+$/, ""))
    .join("\n")
    .trim();
}

export function referenceContentHash(toolName: string, resultText: string): string {
  return createHash("sha1").update(toolName, "utf8").update("\0").update(referenceNormalizeResultText(resultText), "utf8").digest("hex");
}
