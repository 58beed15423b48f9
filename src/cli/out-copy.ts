/**
 * `compact --out`: the compacted copy is another regular file, never the input under another
 * name, and never something that is not a regular file. The input is only read; the copy is
 * written through one descriptor that was checked before a byte changed, so a device node, a
 * FIFO or a link at `--out` is refused and left as it is, even with `--force`.
 */

import fs from "node:fs";
import path from "node:path";
import { blobDirFor } from "../core/spill-layout.js";
import { kindOf, lstatOrNothing, NotRegularFileError, sameFile } from "../io/regular-file.js";
import { CliError } from "./errors.js";
import { readHeaderId } from "./preflight.js";

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const COPY_CHUNK_BYTES = 1024 * 1024;

/** The copy this run made: removed again (only it) when the compaction fails. */
export interface OutCopy {
  readonly path: string;
  readonly identity: fs.Stats;
}

/** Refuses an `--out` that is the input, lies in the input's spill folder, or is not a regular file; writes nothing. */
export function checkOutTarget(input: string, out: string, force: boolean): void {
  const inputStat = fs.statSync(input);
  const followed = statOrNothing(out);
  if (followed !== undefined && sameFile(followed, inputStat)) {
    throw new CliError(`${out}: --out is the input ${input} (the same file by device and inode); name another file`);
  }
  const own = lstatOrNothing(out);
  if (own !== undefined && !own.isFile()) throw new NotRegularFileError(out, kindOf(own), "--out");
  if (insideBlobDir(input, out)) throw new CliError(`${out}: --out lies inside the input's spill folder; name a file elsewhere`);
  if (own !== undefined && !force) throw new CliError(`${out}: already exists (use --force to overwrite)`);
}

/** Byte copy of the input at `out`, after checkOutTarget; the checks are made again on the open descriptor. */
export function copyForOut(input: string, out: string, force: boolean): OutCopy {
  const inputStat = fs.statSync(input);
  const fd = openOut(out, force, inputStat.mode & 0o7777);
  try {
    const identity = fs.fstatSync(fd);
    if (!identity.isFile()) throw new NotRegularFileError(out, kindOf(identity), "--out");
    if (sameFile(identity, inputStat)) throw new CliError(`${out}: --out is the input ${input}; name another file`);
    // Only now, with a regular file that is not the input open, may its old bytes go.
    fs.ftruncateSync(fd, 0);
    copyInto(input, fd);
    return { path: out, identity };
  } finally {
    fs.closeSync(fd);
  }
}

/** Removes the copy of a failed run, and only while it is still the file this run made. */
export function removeFailedCopy(copy: OutCopy): void {
  const now = lstatOrNothing(copy.path);
  if (now !== undefined && now.isFile() && sameFile(now, copy.identity)) fs.rmSync(copy.path, { force: true });
}

/** No truncation, no following a final link, no waiting for a FIFO's reader. */
function openOut(out: string, force: boolean, mode: number): number {
  try {
    return fs.openSync(out, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | (force ? 0 : O_EXCL), mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw new CliError(`${out}: already exists (use --force to overwrite)`);
    if (code === "ELOOP") throw new NotRegularFileError(out, "a symbolic link", "--out");
    if (code === "ENXIO") throw new NotRegularFileError(out, "a FIFO", "--out");
    throw error;
  }
}

function copyInto(input: string, fd: number): void {
  const source = fs.openSync(input, "r");
  try {
    const buffer = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
    for (;;) {
      const got = fs.readSync(source, buffer, 0, buffer.length, null);
      if (got === 0) return;
      let written = 0;
      while (written < got) written += fs.writeSync(fd, buffer, written, got - written);
    }
  } finally {
    fs.closeSync(source);
  }
}

function statOrNothing(target: string): fs.Stats | undefined {
  try {
    return fs.statSync(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A dangling link or a path through a non-folder: nothing that could be the input.
    if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") return undefined;
    throw error;
  }
}

/** `out`'s folder is the input's blob folder or below it (compared by real paths). */
function insideBlobDir(input: string, out: string): boolean {
  const sessionId = readHeaderId(input);
  if (sessionId === undefined) return false;
  const blobDir = realOrSelf(blobDirFor(path.dirname(fs.realpathSync(input)), sessionId));
  const outDir = realOrSelf(path.dirname(path.resolve(out)));
  return outDir === blobDir || outDir.startsWith(`${blobDir}${path.sep}`);
}

function realOrSelf(target: string): string {
  try {
    return fs.realpathSync(target);
  } catch (error) {
    // Not there (yet): the path as given is what it would be.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return path.resolve(target);
    throw error;
  }
}
