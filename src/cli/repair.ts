/**
 * `--repair`: keep a byte-exact `.bak` of the session, then drop the malformed lines pi itself
 * would skip on load and split a line of entries glued together into one line per entry (an
 * incomplete last line is cut by the appender via `dropTruncatedTail`). Every other line stays
 * byte-identical.
 */

import fs from "node:fs";
import { createReadStream } from "node:fs";
import { writeFileAtomic } from "../io/atomic-write.js";
import { readSession } from "../io/read-session.js";
import { lstatOrNothing, refuseNonRegular } from "../io/regular-file.js";
import { SessionFileError } from "../io/session-errors.js";
import { joinedPieces } from "../io/session-line.js";
import { CliError } from "./errors.js";

/** Session problems `--repair` knows how to fix. */
export function isRepairable(error: unknown): error is SessionFileError {
  return error instanceof SessionFileError && (error.code === "truncated-last-line" || error.code === "malformed-line" || error.code === "joined-entries");
}

/** Copies the whole file to `<file>.bak` atomically (temp file, fsync, rename); refuses to overwrite unless forced. */
export async function backupSession(file: string, force: boolean): Promise<string> {
  const backup = `${file}.bak`;
  // A link or anything else that is not a regular file is named as such, with or without --force.
  refuseNonRegular(backup, "backup");
  if (!force && lstatOrNothing(backup) !== undefined) {
    throw new CliError(`${backup}: a backup already exists; move it away first (or use --force to replace it)`);
  }
  const mode = fs.statSync(file).mode & 0o7777;
  await writeFileAtomic(backup, createReadStream(file), { mode, role: "backup" });
  return backup;
}

/**
 * Rewrites the file without the lines pi skips as malformed, and with each line of glued entries
 * split into one line per entry (byte-exact pieces); returns the numbers of the dropped lines.
 */
export async function dropMalformedLines(file: string): Promise<number[]> {
  const loaded = await readSession(file, { malformedLines: "skip" });
  if (loaded.skippedLines.length === 0 && loaded.joinedLines.length === 0) return [];
  const skip = new Set(loaded.skippedLines);
  const split = new Set(loaded.joinedLines);
  const mode = fs.statSync(file).mode & 0o7777;
  // The path as read: writeFileAtomic refuses a link there, and its temporary file goes beside it.
  await writeFileAtomic(file, repairedLines(file, skip, split), { mode, role: "session" });
  return loaded.skippedLines;
}

/** A glued line as one line per entry. */
function splitLine(line: Buffer): Buffer {
  const text = line.toString("utf8");
  const newline = text.endsWith("\n") ? "\n" : "";
  const pieces = joinedPieces(newline ? text.slice(0, -1) : text) ?? [text];
  return Buffer.from(`${pieces.join("\n")}${newline}`, "utf8");
}

/** The file's lines minus `skip`, with the `split` ones split; the unterminated tail is kept as is. */
async function* repairedLines(file: string, skip: ReadonlySet<number>, split: ReadonlySet<number>): AsyncGenerator<Buffer> {
  for await (const { line, bytes } of keptLines(file, skip)) yield split.has(line) ? splitLine(bytes) : bytes;
}

/** The file's bytes minus the given lines (each with its "\n"); the unterminated tail is kept as is. */
async function* keptLines(file: string, skip: ReadonlySet<number>): AsyncGenerator<{ line: number; bytes: Buffer }> {
  let line = 1;
  let carry: Buffer[] = [];
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    let pos = 0;
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, pos)) {
      carry.push(chunk.subarray(pos, newline + 1));
      if (!skip.has(line)) yield { line, bytes: Buffer.concat(carry) };
      carry = [];
      line++;
      pos = newline + 1;
    }
    if (pos < chunk.length) carry.push(chunk.subarray(pos));
  }
  if (carry.length > 0 && !skip.has(line)) yield { line, bytes: Buffer.concat(carry) };
}
