/**
 * Rewrites a version-1/2 session file as version 3 through an atomic temp-file-and-rename, so pi
 * finds it already migrated and never rewrites it itself. Refuses a file whose size changed since
 * it was read (someone else wrote it), and a line it would lose that the caller did not allow to
 * drop.
 */

import { stat } from "node:fs/promises";
import type { SessionEntry, SessionHeader } from "../core/session-types.js";
import { CURRENT_SESSION_VERSION } from "../core/session-types.js";
import { writeFileAtomic } from "./atomic-write.js";
import { crashPoint } from "./crash-points.js";
import type { EntryLocation, LoadedSession } from "./loaded-session.js";
import { asIoError, SessionFileError } from "./session-errors.js";
import { jsonText } from "../core/json-text.js";

export interface MigrateFileOptions {
  /** Leave out an incomplete last line (pi drops it too when it rewrites) instead of refusing. */
  dropTruncatedTail?: boolean;
  /** Leave out lines skipped as malformed (LoadedSession.skippedLines; pi drops them too). */
  dropMalformedLines?: boolean;
}

/**
 * Rewrites a version-1/2 session file as version 3 (the entries readSession already migrated
 * in memory), atomically and keeping the file's mode. Returns the session as now on disk
 * (same header and entry objects, new line numbers and size), or `loaded` itself when the
 * file already was version 3; `warnings` still describe the file as it was read.
 * Nobody else may write the file meanwhile.
 */
export async function migrateFileInPlace(loaded: LoadedSession, options: MigrateFileOptions = {}): Promise<LoadedSession> {
  if (loaded.originalVersion >= CURRENT_SESSION_VERSION) return loaded;
  if (loaded.lightened) throw new SessionFileError("io", loaded.file, "internal error: a lightened session cannot be written back");
  const counter: SerializeCounter = { bytes: 0, locations: new Map() };
  await rewriteMigrated(loaded, serialize(loaded, counter), options);
  return rewrittenSession(loaded, counter);
}

/**
 * Replaces a version-1/2 file, as `loaded` read it, with `lines` (its version-3 form, each line
 * with its "\n"), atomically and keeping the file's mode and owner. Refuses when a line would be
 * lost that the options do not allow to drop, or when the file changed since it was read.
 */
export async function rewriteMigrated(loaded: LoadedSession, lines: Iterable<Uint8Array> | AsyncIterable<Uint8Array>, options: MigrateFileOptions): Promise<void> {
  const tail = loaded.truncatedTail;
  if (tail !== null && options.dropTruncatedTail !== true) {
    throw new SessionFileError("truncated-last-line", loaded.file, "last line is incomplete; refusing to rewrite the file", tail.line);
  }
  const skipped = loaded.skippedLines[0];
  if (skipped !== undefined && options.dropMalformedLines !== true) {
    throw new SessionFileError("malformed-line", loaded.file, "malformed line would be lost; refusing to rewrite the file", skipped);
  }
  try {
    const before = await stat(loaded.file);
    if (before.size !== loaded.byteLength) {
      throw new SessionFileError("io", loaded.file, `file changed since it was read (expected ${loaded.byteLength} bytes, found ${before.size})`);
    }
    // Only root can (and must) hand the new file back to its owner.
    const owner = process.getuid?.() === 0 ? { uid: before.uid, gid: before.gid } : undefined;
    // The path as read: writeFileAtomic refuses a link there, and its temporary file goes beside it.
    await writeFileAtomic(loaded.file, lines, { mode: before.mode & 0o7777, owner, role: "session" });
    crashPoint("migrate-written"); // test-only (crash-points.ts)
  } catch (error) {
    throw asIoError(error, loaded.file, "cannot rewrite the migrated session");
  }
}

interface SerializeCounter {
  bytes: number;
  locations: Map<SessionEntry, EntryLocation>;
}

/** One Buffer per line, so the file is never held as one string. */
function* serialize(loaded: LoadedSession, counter: SerializeCounter): Generator<Buffer> {
  const values: Array<SessionHeader | SessionEntry> = [loaded.header, ...loaded.entries];
  for (const [i, value] of values.entries()) {
    const line = Buffer.from(`${jsonText(value)}\n`, "utf8");
    if (i > 0) counter.locations.set(value as SessionEntry, { line: i + 1, byteOffset: counter.bytes, bytes: line.length - 1, terminated: true });
    counter.bytes += line.length;
    yield line;
  }
}

function rewrittenSession(loaded: LoadedSession, counter: SerializeCounter): LoadedSession {
  const { locations } = counter;
  return {
    ...loaded,
    lineOf: (entry) => locations.get(entry)?.line,
    locationOf: (entry) => locations.get(entry),
    messageCharsOf: (entry) => locations.get(entry)?.messageChars,
    // The locations by index were the file's before it was rewritten.
    locationsByIndex: undefined,
    originalVersion: CURRENT_SESSION_VERSION,
    byteLength: counter.bytes,
    truncatedTail: null,
    missingFinalNewline: false,
    skippedLines: [],
    joinedLines: [],
  };
}
