/**
 * Reading a spilled tool output back (reference §5 "Recovery"), or any other spill file (a spilled
 * content part, io/read-part.ts: `SpillRef`). A spill file is read only inside
 * the session's own blob folder as it is now, looked up by the file name its record names
 * (core/spill-layout.ts `confinedSpillName`): the recorded path itself is never opened, so a
 * forged or stale record (a moved session's old place) cannot make chainpress read any other
 * file. The bytes are checked against what was recorded when they were written; a record with
 * nothing to check them against is not trusted past its preview. Failures are returned as values,
 * not thrown: a missing, refused or damaged spill file is an expected condition the query tool
 * reports, not a crash.
 */

import { constants as bufferConstants } from "node:buffer";
import fs from "node:fs";
import path from "node:path";
import { contentHash } from "../core/content-hash.js";
import { digestMatches, type Hasher } from "../core/digest.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import { confinedSpillName } from "../core/spill-layout.js";
import { kindOf, NotRegularFileError, openRegularForReadingAsync, readAtMostAsync, sameFile } from "./regular-file.js";

/** Why a spilled body could not be returned. */
export type SpillFailureReason =
  /** No spill path, or no file at it. */
  | "missing"
  /** The file exists but its bytes differ from the recorded length, digest, or are not UTF-8. */
  | "corrupt"
  /** The file exists but could not be read (permissions, not a regular file, I/O error). */
  | "unreadable"
  /** The record names a place outside the session's blob folder, or the blob folder is not a real folder: nothing was read. */
  | "refused"
  /** The record carries neither `spillDigest` nor `contentHash`: no file could be told to be its output. */
  | "unverifiable";

export interface SpillFailure {
  ok: false;
  reason: SpillFailureReason;
  /** Human-readable cause, naming the path or the record. */
  detail: string;
}

export type SpillReadResult = { ok: true; /** The full output. */ text: string } | SpillFailure;

// fatal: a damaged file must not decode to U+FFFD silently; ignoreBOM: keep a leading U+FEFF
// that was part of the output.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function failure(reason: SpillFailureReason, detail: string): SpillFailure {
  return { ok: false, reason, detail };
}

function readFailure(path: string, error: unknown): SpillFailure {
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

/**
 * What any spill file is looked up and checked by: a spilled output's record, or one spilled
 * content part of it (io/read-part.ts). The same confinement and checks hold for every kind.
 */
export interface SpillRef {
  /** How refusals name it: `record <id>@<ts>`, with ` part <at>` for a part. */
  name: string;
  spillPath: string | undefined;
  /** Recorded byte length; absent on pi-condense's records (then the file's own size, bounded). */
  spillBytes?: number;
  /** Recorded `xxh64:` digest of the bytes; absent on pi-condense's records. */
  spillDigest?: string;
}

/** A spill file's bytes, confined, of the recorded size and digest; still to be decoded. */
export type SpillBytesResult = { ok: true; bytes: Uint8Array; file: string } | SpillFailure;

/** Byte length and digest are checked before anything decodes them, so a damaged file is never shown as what was archived. */
function verifyBytes(ref: SpillRef, path: string, bytes: Uint8Array, hasher: Hasher): SpillBytesResult {
  if (typeof ref.spillBytes === "number" && bytes.length !== ref.spillBytes) {
    // Also a file that grew between fstat and the read (one byte past the record is read).
    return failure("corrupt", `spill file ${path} has ${bytes.length} bytes, expected ${ref.spillBytes}`);
  }
  if (ref.spillDigest !== undefined && !digestMatches(hasher, ref.spillDigest, bytes)) {
    return failure("corrupt", `spill file ${path} does not match its recorded digest ${ref.spillDigest}`);
  }
  return { ok: true, bytes, file: path };
}

/** A spill file's bytes as UTF-8 text; a damaged file fails rather than decode to U+FFFD. */
export function decodeSpill(bytes: Uint8Array, path: string): { ok: true; text: string } | SpillFailure {
  try {
    return { ok: true, text: decoder.decode(bytes) };
  } catch {
    return failure("corrupt", `spill file ${path} is not valid UTF-8`);
  }
}

/** A spilled record's text, checked against its content hash where it has no digest. */
function verifiedText(record: ToolCallRecord, read: SpillBytesResult): SpillReadResult {
  if (!read.ok) return read;
  const decoded = decodeSpill(read.bytes, read.file);
  if (!decoded.ok) return decoded;
  // Records written by pi-condense carry no digest; their content hash still catches most damage.
  if (record.spillDigest === undefined && record.contentHash !== undefined && contentHash(record.toolName, decoded.text) !== record.contentHash) {
    return failure("corrupt", `spill file ${read.file} does not match its recorded content hash ${record.contentHash}`);
  }
  return decoded;
}

/**
 * The file is opened without following a final link and without blocking, checked to be a
 * regular file, and read only as far as the recorded length allows (plus one byte, which tells a
 * grown file): a FIFO, a device or a huge file at a crafted `spillPath` costs one prompt refusal.
 */
async function readAt(ref: SpillRef, path: string, hasher: Hasher): Promise<SpillBytesResult> {
  let bytes: Uint8Array;
  try {
    const { handle, stat } = await openRegularForReadingAsync(path, "spill file");
    try {
      const expected = typeof ref.spillBytes === "number" ? ref.spillBytes : stat.size;
      if (stat.size !== expected) return failure("corrupt", `spill file ${path} has ${stat.size} bytes, expected ${expected}`);
      if (expected > LARGEST_OUTPUT_BYTES) return failure("corrupt", `spill file ${path} has ${stat.size} bytes, more than any tool output can have`);
      bytes = await readAtMostAsync(handle, expected + 1);
    } finally {
      await handle.close();
    }
  } catch (error) {
    return readFailure(path, error);
  }
  return verifyBytes(ref, path, bytes, hasher);
}

/** How a record is named in a refusal: its call id and, when it has one, its result's time. */
export function recordName(record: Pick<ToolCallRecord, "toolCallId" | "resultTimestamp">): string {
  return record.resultTimestamp === undefined ? `record ${record.toolCallId}` : `record ${record.toolCallId}@${record.resultTimestamp}`;
}

/** A spilled record's own file as a SpillRef. */
function recordSpillRef(record: ToolCallRecord): SpillRef {
  const ref: SpillRef = { name: recordName(record), spillPath: record.spillPath };
  if (typeof record.spillBytes === "number") ref.spillBytes = record.spillBytes;
  if (record.spillDigest !== undefined) ref.spillDigest = record.spillDigest;
  return ref;
}

/**
 * Where a spill file is: `<blobDir>/<name>`, or why it is not looked for. `blobDir` is the
 * session's blob folder as it is now; undefined when the session has no file (nothing then can
 * be read).
 */
export function confinedSpillFile(ref: Pick<SpillRef, "name" | "spillPath">, blobDir: string | undefined): { ok: true; file: string } | SpillFailure {
  const stored = ref.spillPath;
  if (!stored) return { ok: false, reason: "missing", detail: `${ref.name} has no spill path` };
  if (blobDir === undefined) return { ok: false, reason: "refused", detail: `${ref.name}: the session has no folder, so its spill file ${JSON.stringify(stored)} is not read` };
  const name = confinedSpillName(stored, path.basename(blobDir));
  if (name === undefined) {
    return { ok: false, reason: "refused", detail: `${ref.name}: spill path ${JSON.stringify(stored)} is not a file of the session's blob folder ${path.basename(blobDir)}; refused, nothing read` };
  }
  return { ok: true, file: path.join(blobDir, name) };
}

/** The blob folder must be a real folder, not a link to one elsewhere; undefined when it is, a failure otherwise. */
async function blobDirProblem(blobDir: string, file: string): Promise<SpillFailure | undefined> {
  let stat: fs.Stats;
  try {
    stat = await fs.promises.lstat(blobDir);
  } catch (error) {
    return readFailure(file, error);
  }
  if (stat.isDirectory()) return undefined;
  return failure("refused", `blob folder ${blobDir} is ${kindOf(stat)}, not a folder; refused, nothing read`);
}

/**
 * The verified bytes of any spill file `ref` names, read from the session's blob folder as it is
 * now (`blobDir`, required: see confinedSpillFile), whatever folder the reference names. The
 * caller decides first whether `ref` can be verified at all.
 */
export async function readSpillBytes(ref: SpillRef, hasher: Hasher, blobDir: string | undefined): Promise<SpillBytesResult> {
  const place = confinedSpillFile(ref, blobDir);
  if (!place.ok) return place;
  const problem = await blobDirProblem(blobDir!, place.file);
  return problem ?? readAt(ref, place.file, hasher);
}

/**
 * The verified full output of a spilled record, read from the session's blob folder as it is now
 * (`blobDir`, required: see confinedSpillFile), whatever folder the record names.
 */
export async function readSpilledBody(record: ToolCallRecord, hasher: Hasher, blobDir: string | undefined): Promise<SpillReadResult> {
  const ref = recordSpillRef(record);
  const place = confinedSpillFile(ref, blobDir);
  if (!place.ok) return place;
  if (record.spillDigest === undefined && record.contentHash === undefined) {
    return failure("unverifiable", `${ref.name} carries no digest nor content hash, so no file can be told to be its output; not read`);
  }
  return verifiedText(record, await readSpillBytes(ref, hasher, blobDir));
}

/** The full output of any record: inline text, or the verified spill file (see readSpilledBody). */
export async function resolveRecordBody(record: ToolCallRecord, hasher: Hasher, blobDir: string | undefined): Promise<SpillReadResult> {
  if (!record.spillPath) return { ok: true, text: record.resultText };
  return readSpilledBody(record, hasher, blobDir);
}

/**
 * The path a stub should show for a spilled record: the recorded one when it is the file in the
 * session's blob folder (always so for a session that was not moved), else that file's path now;
 * undefined for a path that is refused (see confinedSpillFile), so that no stub names it. The
 * recorded place is compared by identity only, never read.
 */
export function locateSpillFile(storedPath: string, blobDir: string | undefined): string | undefined {
  if (blobDir === undefined) return storedPath;
  const name = confinedSpillName(storedPath, path.basename(blobDir));
  if (name === undefined) return undefined;
  const file = path.join(blobDir, name);
  return file === storedPath || sameExistingFile(storedPath, file) ? storedPath : file;
}

function sameExistingFile(a: string, b: string): boolean {
  const first = fs.statSync(a, { throwIfNoEntry: false });
  const second = first && fs.lstatSync(b, { throwIfNoEntry: false });
  return first !== undefined && second !== undefined && second.isFile() && sameFile(first, second);
}
