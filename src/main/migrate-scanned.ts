/**
 * Rewrites a version-1/2 session file as version 3 from its lightened scan, without holding the
 * session in memory: each line is read and parsed again, one at a time, migrated like its twin in
 * the scan (core/session-migrate.ts `migrateLikeTwin`: the scan already gave every entry its id
 * and parent) and written out. The bytes are the ones `migrateFileInPlace` writes from a fully
 * read session (test/session-migrate.test.ts); memory is proportional to the entries, and the
 * event loop gets a turn every few milliseconds.
 */

import fs from "node:fs";
import { migrateHeader, migrateLikeTwin, type RawEntry } from "../core/session-migrate.js";
import { CURRENT_SESSION_VERSION, type SessionHeader } from "../core/session-types.js";
import { rewriteMigrated, type MigrateFileOptions } from "../io/migrate-file.js";
import { RangeReader } from "../io/read-range.js";
import type { EntryLocation, LoadedSession } from "../io/loaded-session.js";
import { SessionFileError } from "../io/session-errors.js";
import { classifyLine } from "../io/session-line.js";
import { pauseIfDue } from "./cooperative.js";
import { jsonText } from "../core/json-text.js";

export async function migrateScannedFile(scanned: LoadedSession, options: MigrateFileOptions = {}): Promise<void> {
  if (scanned.originalVersion >= CURRENT_SESSION_VERSION) return;
  const fd = fs.openSync(scanned.file, "r");
  try {
    await rewriteMigrated(scanned, migratedLines(scanned, fd), options);
  } finally {
    fs.closeSync(fd);
  }
}

async function* migratedLines(scanned: LoadedSession, fd: number): AsyncGenerator<Uint8Array> {
  const firstEntry = scanned.entries[0];
  const ranges = new RangeReader();
  const header = readHeader(scanned, fd, firstEntry ? locationAt(scanned, 0).byteOffset : scanned.byteLength, ranges);
  migrateHeader(header);
  yield lineBytes(header);
  // The values of the line being replayed: a glued line yields several entries in a row.
  let lineOffset = -1;
  let values: unknown[] = [];
  let next = 0;
  for (let k = 0; k < scanned.entries.length; k++) {
    const twin = scanned.entries[k]!;
    const location = locationAt(scanned, k);
    if (location.byteOffset !== lineOffset) {
      lineOffset = location.byteOffset;
      values = lineValues(scanned.file, classifyLine(ranges.read(fd, location.byteOffset, location.bytes, scanned.file), location.byteOffset === 0), location.line);
      next = 0;
    }
    const entry = values[next++] as RawEntry | undefined;
    if (entry?.type !== twin.type) throw changed(scanned.file, location.line);
    migrateLikeTwin(entry, twin as unknown as RawEntry, scanned.originalVersion);
    yield lineBytes(entry);
    await pauseIfDue();
  }
}

/** Where the k-th entry of the scan lies. */
function locationAt(scanned: LoadedSession, k: number): EntryLocation {
  const location = scanned.locationsByIndex?.location(k) ?? scanned.locationOf(scanned.entries[k]!);
  if (!location) throw new Error(`internal error: entry ${k} of the scan of ${scanned.file} has no location`);
  return location;
}

/** The header is the first line that is not blank; only blank lines may come before it. */
function readHeader(scanned: LoadedSession, fd: number, end: number, ranges: RangeReader): SessionHeader {
  const head = Buffer.from(ranges.read(fd, 0, end, scanned.file));
  let start = 0;
  for (let line = 1; start < head.length; line++) {
    const newline = head.indexOf(0x0a, start);
    const stop = newline === -1 ? head.length : newline;
    const result = classifyLine(head.subarray(start, stop), start === 0);
    if (result.kind === "value" && typeof result.value === "object" && result.value !== null) return result.value as SessionHeader;
    if (result.kind !== "blank") throw changed(scanned.file, line);
    start = stop + 1;
  }
  throw changed(scanned.file, 1);
}

function lineValues(file: string, result: ReturnType<typeof classifyLine>, line: number): unknown[] {
  if (result.kind === "value") return [result.value];
  if (result.kind === "joined") return result.values;
  throw changed(file, line);
}

function lineBytes(value: unknown): Buffer {
  return Buffer.from(`${jsonText(value)}\n`, "utf8");
}

/** The scan and the rewrite read different bytes: someone wrote the file in between. Nothing is replaced. */
function changed(file: string, line: number): SessionFileError {
  return new SessionFileError("io", file, "file changed while it was being migrated", line);
}
