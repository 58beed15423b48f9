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

/**
 * The same normalisation with `line.replace(/[ \t]+$/, "")` written as a loop: the test oracle for
 * long texts (the equivalence test holds the two equal). The regex retries from every blank of
 * every run on a long line with many runs of blanks: a fuzzed 200k-character line took it 157 s and
 * timed the test out; 100 runs of 2,000 blanks, each followed by "x", take it 567 ms.
 */
export function linearReferenceNormalizeResultText(text: string): string {
  return text
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map(stripTrailingBlanks)
    .join("\n")
    .trim();
}

export function linearReferenceContentHash(toolName: string, resultText: string): string {
  return createHash("sha1").update(toolName, "utf8").update("\0").update(linearReferenceNormalizeResultText(resultText), "utf8").digest("hex");
}

function stripTrailingBlanks(line: string): string {
  let end = line.length;
  while (end > 0 && (line.charCodeAt(end - 1) === 0x20 || line.charCodeAt(end - 1) === 0x09)) end--;
  return end === line.length ? line : line.slice(0, end);
}
