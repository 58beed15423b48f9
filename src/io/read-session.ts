/**
 * Reads a pi session file (JSONL) into memory, streaming it so memory stays proportional to
 * the file: lines are split on byte 0x0A only (readline would also split on U+2028/U+2029 and
 * \r, which may appear inside JSON strings), decoded as strict UTF-8 and JSON-parsed once.
 * Version 1/2 files are migrated in memory (see core/session-migrate.ts); the file is never
 * written here. Problems that make the content untrustworthy throw SessionFileError; a last
 * line cut off by a crashed writer is reported, not thrown.
 */
import { createReadStream } from "node:fs";
import { lstat } from "node:fs/promises";
import { performance } from "node:perf_hooks";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import type { IdFor } from "../core/session-migrate.js";
import { SessionBuilder } from "./session-builder.js";
import type { LineMeta, LoadedSession } from "./loaded-session.js";
import { SessionFileError } from "./session-errors.js";
import { classifyLine } from "./session-line.js";
import { kindOf } from "./regular-file.js";

export type { EntryLocation, LineMeta, LoadedSession, TruncatedTail } from "./loaded-session.js";

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

/** One physical line, without its "\n". */
interface RawLine extends LineMeta {
  data: Buffer;
}

/** Reads, validates and (in memory) migrates a session file. */
export async function readSession(file: string, opts: ReadSessionOptions = {}): Promise<LoadedSession> {
  const builder = new SessionBuilder(file, { skipMalformed: opts.malformedLines === "skip", ...(opts.idFactory ? { idFactory: opts.idFactory } : {}) });
  const counter = { bytes: 0 };
  try {
    // Before opening: a FIFO would block the open, a device would never end, and a final link
    // would be read as another file than the one named (cli/session-path.ts resolves a followed one).
    const found = await lstat(file);
    if (!found.isFile()) throw new SessionFileError("io", file, `is ${kindOf(found)}, not a regular file`);
    const maxLineBytes = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    let stretch = performance.now();
    for await (const raw of splitLines(file, opts.chunkBytes ?? 1024 * 1024, maxLineBytes, counter)) {
      builder.accept(raw, classifyLine(raw.data, raw.line === 1));
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
  return builder.finish(counter.bytes);
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
      yield { data: bytes, bytes: bytes.length, line, byteOffset, terminated: true };
      byteOffset += pendingLength + 1;
      line += 1;
      pending = [];
      pendingLength = 0;
      pos = newline + 1;
    }
  }
  if (pendingLength > 0) {
    yield { data: Buffer.concat(pending, pendingLength), bytes: pendingLength, line, byteOffset, terminated: false };
  }
}

function tooLong(file: string, line: number, maxLineBytes: number): SessionFileError {
  return new SessionFileError("line-too-long", file, `line is longer than ${maxLineBytes} bytes`, line);
}

