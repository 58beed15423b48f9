/**
 * `--repair`: keep a byte-exact `.bak` of the session, then remove what pi itself would drop on
 * load (malformed lines, e.g. two entries glued on one line; an incomplete last line is cut by
 * the appender via `dropTruncatedTail`). Every other line stays byte-identical.
 */

import fs from "node:fs";
import { createReadStream } from "node:fs";
import { writeFileAtomic } from "../io/atomic-write.js";
import { readSession } from "../io/read-session.js";
import { SessionFileError } from "../io/session-errors.js";
import { CliError } from "./errors.js";

/** Session problems `--repair` knows how to fix. */
export function isRepairable(error: unknown): error is SessionFileError {
  return error instanceof SessionFileError && (error.code === "truncated-last-line" || error.code === "malformed-line");
}

/** Copies the whole file to `<file>.bak` atomically (temp file, fsync, rename); refuses to overwrite unless forced. */
export async function backupSession(file: string, force: boolean): Promise<string> {
  const backup = `${file}.bak`;
  if (!force && fs.existsSync(backup)) {
    throw new CliError(`${backup}: a backup already exists; move it away first (or use --force to replace it)`);
  }
  const mode = fs.statSync(file).mode & 0o7777;
  await writeFileAtomic(backup, createReadStream(file), { mode });
  return backup;
}

/** Rewrites the file without the lines pi skips as malformed; returns their 1-based numbers. */
export async function dropMalformedLines(file: string): Promise<number[]> {
  const loaded = await readSession(file, { malformedLines: "skip" });
  if (loaded.skippedLines.length === 0) return [];
  const skip = new Set(loaded.skippedLines);
  const mode = fs.statSync(file).mode & 0o7777;
  await writeFileAtomic(file, keptLines(file, skip), { mode });
  return loaded.skippedLines;
}

/** The file's bytes minus the given lines (each with its "\n"); the unterminated tail is kept as is. */
async function* keptLines(file: string, skip: ReadonlySet<number>): AsyncGenerator<Buffer> {
  let line = 1;
  let carry: Buffer[] = [];
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    let pos = 0;
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, pos)) {
      carry.push(chunk.subarray(pos, newline + 1));
      if (!skip.has(line)) yield Buffer.concat(carry);
      carry = [];
      line++;
      pos = newline + 1;
    }
    if (pos < chunk.length) carry.push(chunk.subarray(pos));
  }
  if (carry.length > 0 && !skip.has(line)) yield Buffer.concat(carry);
}
