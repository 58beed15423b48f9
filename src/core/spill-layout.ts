/**
 * Where spill files live: `<session folder>/<session id>-blobs/`, as pi-condense puts them.
 * File names differ from upstream on purpose: upstream's sanitising is lossy (`a.b@1` and `a_b@1`
 * collide, reference §13.9), so a readable prefix is followed by a hash of the exact key. The
 * name uses only [A-Za-z0-9_.-], so no id can climb out of the folder.
 */

import path from "node:path";
import type { Hasher } from "./digest.js";

const READABLE_PREFIX_MAX = 80;

export function blobDirFor(sessionDir: string, sessionId: string): string {
  return path.join(sessionDir, `${sanitizeForFileName(sessionId)}-blobs`);
}

/** Every character outside [A-Za-z0-9_-] becomes "_" (upstream's rule). */
export function sanitizeForFileName(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, "_");
}

export function spillFileName(hasher: Hasher, occurrenceKey: string): string {
  const readable = sanitizeForFileName(occurrenceKey).slice(0, READABLE_PREFIX_MAX);
  return `${readable}.${hasher.hex64(occurrenceKey)}.txt`;
}

/**
 * The spill file of an output's non-text content part at index `at` (core/archived-parts.ts): its
 * JSON text, so `.json`, which also keeps every part's name apart from every output's.
 */
export function partSpillFileName(hasher: Hasher, occurrenceKey: string, at: number): string {
  const key = `${occurrenceKey}#part${at}`;
  const readable = sanitizeForFileName(key).slice(0, READABLE_PREFIX_MAX);
  return `${readable}.${hasher.hex64(key)}.json`;
}

/**
 * The file name a record's `spillPath` names inside a blob folder called `blobDirName`, or
 * undefined when the path names anything else. Writers (chainpress, pi-condense) record
 * `<session folder>/<blobDirName>/<name>`, absolute and normalised, wherever the session then
 * lived: only the last two components are trusted, and the file is then looked for by name in
 * the session's blob folder as it is now. A path with `.` or `..` components, a parent folder of
 * another name, or a hidden name (a temporary file) is refused.
 */
export function confinedSpillName(storedPath: string, blobDirName: string): string | undefined {
  const parts = storedPath.split(path.sep);
  if (parts.length < 2 || parts.some((part) => part === "." || part === "..")) return undefined;
  if (path.normalize(storedPath) !== storedPath) return undefined;
  const name = parts[parts.length - 1]!;
  if (parts[parts.length - 2] !== blobDirName || !isPlainFileName(name)) return undefined;
  return name;
}

/** A name a spill writer could have made: no separator, no NUL, not hidden, not empty. */
function isPlainFileName(name: string): boolean {
  return name.length > 0 && !name.startsWith(".") && !name.includes("\0");
}
