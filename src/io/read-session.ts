/**
 * Reads a pi session file (JSONL) into memory, streaming it so memory stays proportional to
 * the file: lines are split on byte 0x0A only (readline would also split on U+2028/U+2029 and
 * \r, which may appear inside JSON strings), decoded as strict UTF-8 and JSON-parsed once.
 * Version 1/2 files are migrated in memory (see core/session-migrate.ts); the file is never
 * written here. Problems that make the content untrustworthy throw SessionFileError; a last
 * line cut off by a crashed writer is reported, not thrown.
 */
import { isUtf8 } from "node:buffer";
import { createReadStream } from "node:fs";
import { performance } from "node:perf_hooks";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import {
  deterministicIdFactory,
  migrateEntries,
  sessionVersionOf,
  type IdFor,
  type RawEntry,
} from "../core/session-migrate.js";
import type { SessionEntry, SessionHeader } from "../core/session-types.js";
import { SessionFileError, sessionWarning, type SessionWarning } from "./session-errors.js";

/** Longest stretch of parsing between two yields to the event loop. */
const READ_YIELD_MS = 8;

/** Lines longer than this are refused; V8 cannot hold a string much over 512 MiB. */
export const DEFAULT_MAX_LINE_BYTES = 500 * 1024 * 1024;

export interface ReadSessionOptions {
  /** Longest accepted line in bytes (default DEFAULT_MAX_LINE_BYTES); longer → "line-too-long". */
  maxLineBytes?: number;
  /** Ids for entries of version-1 files (default: deterministicIdFactory). */
  idFactory?: (sessionId: string) => IdFor;
  /** Read chunk size in bytes (default 1 MiB). */
  chunkBytes?: number;
  /**
   * "error" (default): a malformed line throws. "skip": it is left out with a warning, exactly
   * as pi's loader does (real sessions contain lines where two entries were glued together).
   */
  malformedLines?: "error" | "skip";
}

/** A last line without a trailing newline that did not parse: a writer crashed mid-line. */
export interface TruncatedTail {
  /** 1-based line number. */
  line: number;
  /** Offset of the line's first byte in the file. */
  byteOffset: number;
  /** Length of the partial line in bytes. */
  bytes: number;
}

export interface LoadedSession {
  /** Path as given to readSession. */
  file: string;
  /** First line; migrated to version 3 in memory when the file was older. */
  header: SessionHeader;
  /** Every entry after the header, in file order (version 3 shape). */
  entries: SessionEntry[];
  /** 1-based line number of an entry of this session (undefined for foreign objects). */
  lineOf(entry: SessionEntry): number | undefined;
  /** Version declared by the file before migration (1 when absent). */
  originalVersion: number;
  /** Bytes read, i.e. the file size at read time. */
  byteLength: number;
  /** Non-fatal problems (duplicate ids, truncated tail, stray headers). */
  warnings: SessionWarning[];
  /** Set when the last line was cut off; that line is not in `entries`. */
  truncatedTail: TruncatedTail | null;
  /** True when the file does not end with "\n" and the tail is not truncated (appenders add one first). */
  missingFinalNewline: boolean;
  /** 1-based numbers of malformed lines left out (only with `malformedLines: "skip"`). */
  skippedLines: number[];
}

/** One physical line, without its "\n". */
interface RawLine {
  bytes: Buffer;
  line: number;
  byteOffset: number;
  /** False for a last line that has no trailing newline. */
  terminated: boolean;
}

/** Reads, validates and (in memory) migrates a session file. */
export async function readSession(file: string, opts: ReadSessionOptions = {}): Promise<LoadedSession> {
  const builder = new SessionBuilder(file, opts.malformedLines === "skip");
  const counter = { bytes: 0 };
  try {
    const maxLineBytes = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    let stretch = performance.now();
    for await (const raw of splitLines(file, opts.chunkBytes ?? 1024 * 1024, maxLineBytes, counter)) {
      builder.accept(raw);
      // Buffered chunks resolve as microtasks: without a real yield, parsing a large file would
      // hold the event loop (a progress bar, a host's UI) for its whole duration.
      if (performance.now() - stretch > READ_YIELD_MS) {
        await yieldToLoop();
        stretch = performance.now();
      }
    }
  } catch (error) {
    throw toSessionError(error, file);
  }
  return builder.finish(counter.bytes, opts.idFactory ?? deterministicIdFactory);
}

function toSessionError(error: unknown, file: string): SessionFileError {
  if (error instanceof SessionFileError) return error;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === "ENOENT") return new SessionFileError("not-found", file, "no such file", undefined, error);
  const what = error instanceof Error ? error.message : String(error);
  return new SessionFileError("io", file, `cannot read: ${what}`, undefined, error);
}

/**
 * Splits the file into lines on byte 0x0A. A line inside one chunk is a view of that chunk
 * (no copy); only lines spanning chunks are concatenated, once.
 */
async function* splitLines(
  file: string,
  chunkBytes: number,
  maxLineBytes: number,
  counter: { bytes: number },
): AsyncGenerator<RawLine> {
  let pending: Buffer[] = [];
  let pendingLength = 0;
  let line = 1;
  let byteOffset = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: chunkBytes }) as AsyncIterable<Buffer>) {
    counter.bytes += chunk.length;
    for (let pos = 0; pos < chunk.length; ) {
      const newline = chunk.indexOf(0x0a, pos);
      const end = newline === -1 ? chunk.length : newline;
      pendingLength += end - pos;
      if (pendingLength > maxLineBytes) throw tooLong(file, line, maxLineBytes);
      pending.push(chunk.subarray(pos, end));
      if (newline === -1) break;
      const bytes = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingLength);
      yield { bytes, line, byteOffset, terminated: true };
      byteOffset += pendingLength + 1;
      line += 1;
      pending = [];
      pendingLength = 0;
      pos = newline + 1;
    }
  }
  if (pendingLength > 0) {
    yield { bytes: Buffer.concat(pending, pendingLength), line, byteOffset, terminated: false };
  }
}

function tooLong(file: string, line: number, maxLineBytes: number): SessionFileError {
  return new SessionFileError("line-too-long", file, `line is longer than ${maxLineBytes} bytes`, line);
}

/** Turns raw lines into a header and entries, then checks and migrates them. */
class SessionBuilder {
  private header: SessionHeader | null = null;
  private readonly entries: RawEntry[] = [];
  private readonly lines: number[] = [];
  private readonly warnings: SessionWarning[] = [];
  private truncatedTail: TruncatedTail | null = null;
  private endsWithoutNewline = false;
  private readonly skippedLines: number[] = [];

  constructor(
    private readonly file: string,
    private readonly skipMalformed: boolean,
  ) {}

  accept(raw: RawLine): void {
    // Whatever this last line turns out to be, an appender must not glue onto it.
    if (!raw.terminated) this.endsWithoutNewline = true;
    const text = this.decode(raw);
    if (text === undefined || text.trim() === "") return;
    const values = this.parse(raw, text);
    if (values === undefined) return;
    for (const value of values) this.acceptValue(value, raw.line);
  }

  private acceptValue(value: unknown, line: number): void {
    if (this.header === null) {
      this.header = this.asHeader(value, line);
      return;
    }
    if (!isRecord(value) || typeof value.type !== "string") {
      this.malformed("not a session entry (no string `type`)", line);
      return;
    }
    this.entries.push(value as RawEntry);
    this.lines.push(line);
  }

  /** Returns undefined when the line is a cut-off tail (already recorded). */
  private decode(raw: RawLine): string | undefined {
    let text: string;
    try {
      // Invalid bytes must fail, not become U+FFFD that a rewrite would then persist. isUtf8 plus
      // toString is several times faster than a fatal TextDecoder on megabyte lines.
      if (!isUtf8(raw.bytes)) throw new TypeError("invalid UTF-8");
      text = raw.bytes.toString("utf8");
    } catch (error) {
      if (!raw.terminated && this.header !== null) return this.markTruncated(raw);
      if (error instanceof TypeError) {
        throw new SessionFileError("invalid-utf8", this.file, "line is not valid UTF-8", raw.line, error);
      }
      throw new SessionFileError("line-too-long", this.file, `cannot decode ${raw.bytes.length} bytes`, raw.line, error);
    }
    // pi reads with trim(), which drops a byte-order mark before the header.
    return raw.line === 1 && text.startsWith("\uFEFF") ? text.slice(1) : text;
  }

  /** The JSON value(s) of a line; undefined when the line is dropped (truncated or skipped). */
  private parse(raw: RawLine, text: string): unknown[] | undefined {
    try {
      return [JSON.parse(text) as unknown];
    } catch (error) {
      // An unterminated last line that splits cleanly is complete too (only its "\n" is missing).
      const joined = this.header !== null ? splitJoinedEntries(text) : undefined;
      if (joined) {
        this.warnings.push(sessionWarning("joined-entries", this.file, `line holds ${joined.length} entries written without a newline between them; all are kept`, raw.line));
        return joined;
      }
      if (this.header === null) {
        throw new SessionFileError("not-a-session", this.file, "first line is not JSON (no session header)", raw.line);
      }
      if (!raw.terminated) return this.markTruncated(raw);
      if (!(error instanceof SyntaxError)) {
        throw new SessionFileError("line-too-long", this.file, `cannot parse ${raw.bytes.length} bytes`, raw.line, error);
      }
      this.malformed(`invalid JSON: ${error.message}`, raw.line, error);
      return undefined;
    }
  }

  /** Throws, or in skip mode records the line as left out (pi drops such lines silently). */
  private malformed(what: string, line: number, cause?: unknown): undefined {
    if (!this.skipMalformed) throw new SessionFileError("malformed-line", this.file, what, line, cause);
    this.skippedLines.push(line);
    this.warnings.push(sessionWarning("malformed-line", this.file, `${what}; line skipped`, line));
    return undefined;
  }

  private markTruncated(raw: RawLine): undefined {
    this.truncatedTail = { line: raw.line, byteOffset: raw.byteOffset, bytes: raw.bytes.length };
    const what = `last line (${raw.bytes.length} bytes at offset ${raw.byteOffset}) is incomplete and was ignored`;
    this.warnings.push(sessionWarning("truncated-last-line", this.file, what, raw.line));
    return undefined;
  }

  private asHeader(value: unknown, line: number): SessionHeader {
    if (isRecord(value) && value.type === "session" && typeof value.id === "string") {
      return value as SessionHeader;
    }
    throw new SessionFileError("not-a-session", this.file, 'first line is not a {"type":"session","id":…} header', line);
  }

  finish(byteLength: number, idFactory: (sessionId: string) => IdFor): LoadedSession {
    const header = this.header;
    if (header === null) throw new SessionFileError("empty", this.file, "file is empty (no session header)");
    const originalVersion = sessionVersionOf(header);
    migrateEntries(header, this.entries, idFactory(header.id));
    const { entries, lines } = this.checkEntries();
    const lineByEntry = new Map<SessionEntry, number>();
    entries.forEach((entry, i) => lineByEntry.set(entry, lines[i]!));
    return {
      file: this.file,
      header,
      entries,
      lineOf: (entry) => lineByEntry.get(entry),
      originalVersion,
      byteLength,
      warnings: this.warnings,
      truncatedTail: this.truncatedTail,
      // A truncated tail is cut off by whoever writes next, so no newline is missing then.
      missingFinalNewline: this.endsWithoutNewline && this.truncatedTail === null,
      skippedLines: this.skippedLines,
    };
  }

  /**
   * Every entry needs a string id and a parentId to sit in the tree (an entry without them is
   * malformed). Duplicate ids only warn: pi keeps the last one.
   */
  private checkEntries(): { entries: SessionEntry[]; lines: number[] } {
    const seen = new Set<string>();
    const entries: SessionEntry[] = [];
    const lines: number[] = [];
    this.entries.forEach((entry, i) => {
      const line = this.lines[i]!;
      if (entry.type === "session") {
        this.warnings.push(sessionWarning("extra-header", this.file, "second session header; pi ignores it", line));
      } else if (typeof entry.id !== "string" || !(entry.parentId === null || typeof entry.parentId === "string")) {
        this.malformed("entry lacks a string `id` or a `parentId`", line);
        return;
      } else if (seen.has(entry.id)) {
        this.warnings.push(sessionWarning("duplicate-id", this.file, `duplicate entry id ${entry.id}; the last one wins`, line));
      }
      if (typeof entry.id === "string") seen.add(entry.id);
      entries.push(entry as SessionEntry);
      lines.push(line);
    });
    return { entries, lines };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Boundary between two entries that a writer put on one line. Inside a JSON string the quote would be escaped, so this cannot occur there. */
const JOINED_BOUNDARY = '}{"type":';

/**
 * A line holding several complete entries back to back (a lost newline, seen in real pi
 * sessions). pi drops such a line, losing every entry on it; we keep them all. Undefined unless
 * every piece parses to an object.
 */
function splitJoinedEntries(text: string): unknown[] | undefined {
  const pieces: string[] = [];
  let start = 0;
  for (let at = text.indexOf(JOINED_BOUNDARY); at !== -1; at = text.indexOf(JOINED_BOUNDARY, at + 1)) {
    pieces.push(text.slice(start, at + 1));
    start = at + 1;
  }
  if (pieces.length === 0) return undefined;
  pieces.push(text.slice(start));
  try {
    const values = pieces.map((piece) => JSON.parse(piece) as unknown);
    return values.every(isRecord) ? values : undefined;
  } catch {
    // Not a clean concatenation: the caller reports the line as malformed.
    return undefined;
  }
}
