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
 * Where a spill file is after its session folder moved (the `<id>-blobs/` folder moves with it):
 * the same file name in the session's current blob folder. Records keep the absolute path they
 * were written with, so this is the only way to find the file again.
 */
export function relocatedSpillPath(storedPath: string, blobDir: string): string {
  return path.join(blobDir, path.basename(storedPath));
}
