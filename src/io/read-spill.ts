/**
 * Reading a spilled tool output back (reference §5 "Recovery"): the file at the record's
 * persisted `spillPath`, or, when nothing is there and the caller names the session's current
 * blob folder, the file of the same name in it (the session folder was moved), checked in
 * either case against what was recorded when it was written. Failures are returned as values, not thrown: a missing or damaged spill file is an
 * expected condition the query tool reports, not a crash.
 */

import { constants as bufferConstants } from "node:buffer";
import { existsSync } from "node:fs";
import { contentHash } from "../core/content-hash.js";
import { digestMatches, type Hasher } from "../core/digest.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import { relocatedSpillPath } from "../core/spill-layout.js";
import { NotRegularFileError, openRegularForReadingAsync, readAtMostAsync } from "./regular-file.js";

/** Why a spilled body could not be returned. */
export type SpillFailureReason =
  /** No spill path, or no file at it. */
  | "missing"
  /** The file exists but its bytes differ from the recorded length, digest, or are not UTF-8. */
  | "corrupt"
  /** The file exists but could not be read (permissions, not a regular file, I/O error). */
  | "unreadable";

export type SpillReadResult =
  | { ok: true; /** The full output. */ text: string }
  | { ok: false; reason: SpillFailureReason; /** Human-readable cause, naming the path. */ detail: string };

// fatal: a damaged file must not decode to U+FFFD silently; ignoreBOM: keep a leading U+FEFF
// that was part of the output.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function failure(reason: SpillFailureReason, detail: string): SpillReadResult {
  return { ok: false, reason, detail };
}

function readFailure(path: string, error: unknown): SpillReadResult {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT" || code === "ENOTDIR") return failure("missing", `spill file not found: ${path}`);
  if (error instanceof NotRegularFileError) return failure("unreadable", `spill file ${path} is ${error.kind}, not a regular file`);
  const message = error instanceof Error ? error.message : String(error);
  return failure("unreadable", `cannot read spill file ${path}: ${message}`);
}

/**
 * No output longer than the longest string V8 holds was ever a string, so no honest spill file
 * is larger than its UTF-8 form: the bound for records that carry no byte length (pi-condense's).
 */
const LARGEST_OUTPUT_BYTES = bufferConstants.MAX_STRING_LENGTH * 3;

/** Byte length and digest are checked before decoding, so a damaged file is never shown as the output. */
function verify(record: ToolCallRecord, path: string, bytes: Uint8Array, hasher: Hasher): SpillReadResult {
  if (typeof record.spillBytes === "number" && bytes.length !== record.spillBytes) {
    // Also a file that grew between fstat and the read (one byte past the record is read).
    return failure("corrupt", `spill file ${path} has ${bytes.length} bytes, expected ${record.spillBytes}`);
  }
  if (record.spillDigest !== undefined && !digestMatches(hasher, record.spillDigest, bytes)) {
    return failure("corrupt", `spill file ${path} does not match its recorded digest ${record.spillDigest}`);
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return failure("corrupt", `spill file ${path} is not valid UTF-8`);
  }
  // Records written by pi-condense carry no digest; their content hash still catches most damage.
  if (record.spillDigest === undefined && record.contentHash !== undefined && contentHash(record.toolName, text) !== record.contentHash) {
    return failure("corrupt", `spill file ${path} does not match its recorded content hash ${record.contentHash}`);
  }
  return { ok: true, text };
}

/**
 * The file is opened without following a final link and without blocking, checked to be a
 * regular file, and read only as far as the recorded length allows (plus one byte, which tells a
 * grown file): a FIFO, a device or a huge file at a crafted `spillPath` costs one prompt refusal.
 */
async function readAt(record: ToolCallRecord, path: string, hasher: Hasher): Promise<SpillReadResult> {
  let bytes: Uint8Array;
  try {
    const { handle, stat } = await openRegularForReadingAsync(path, "spill file");
    try {
      const expected = typeof record.spillBytes === "number" ? record.spillBytes : stat.size;
      if (stat.size !== expected) return failure("corrupt", `spill file ${path} has ${stat.size} bytes, expected ${expected}`);
      if (expected > LARGEST_OUTPUT_BYTES) return failure("corrupt", `spill file ${path} has ${stat.size} bytes, more than any tool output can have`);
      bytes = await readAtMostAsync(handle, expected + 1);
    } finally {
      await handle.close();
    }
  } catch (error) {
    return readFailure(path, error);
  }
  return verify(record, path, bytes, hasher);
}

/**
 * The verified full output of a spilled record. `blobDir`, the session's blob folder as it is
 * now, is searched by file name when the stored path holds nothing; the digest still decides.
 */
export async function readSpilledBody(record: ToolCallRecord, hasher: Hasher, blobDir?: string): Promise<SpillReadResult> {
  const path = record.spillPath;
  if (!path) return failure("missing", `record ${record.toolCallId} has no spill path`);
  const stored = await readAt(record, path, hasher);
  if (stored.ok || stored.reason !== "missing" || blobDir === undefined) return stored;
  const moved = relocatedSpillPath(path, blobDir);
  if (moved === path) return stored;
  const found = await readAt(record, moved, hasher);
  return found.ok || found.reason !== "missing" ? found : failure("missing", `spill file not found: ${path} (nor ${moved})`);
}

/** The full output of any record: inline text, or the verified spill file (see readSpilledBody). */
export async function resolveRecordBody(record: ToolCallRecord, hasher: Hasher, blobDir?: string): Promise<SpillReadResult> {
  if (!record.spillPath) return { ok: true, text: record.resultText };
  return readSpilledBody(record, hasher, blobDir);
}

/**
 * The path a stub should show for a spilled record: the stored one while it exists, else the
 * moved file in `blobDir` when that exists, else the stored one (the query then says it is gone).
 */
export function locateSpillFile(storedPath: string, blobDir: string | undefined): string {
  if (blobDir === undefined || existsSync(storedPath)) return storedPath;
  const moved = relocatedSpillPath(storedPath, blobDir);
  return existsSync(moved) ? moved : storedPath;
}
