/**
 * `compact --out`: the compacted copy is another regular file, never the input under another
 * name, and never something that is not a regular file. The input is only read. The copy is
 * made and compacted under a temporary name beside the target and renamed onto it only once
 * complete and durable, so a failure (a full disk, a failed chain, a signal) leaves nothing at
 * the target; a device node, a FIFO or a link at `--out` is refused and left as it is, even with
 * `--force`. The copy is self-contained: its records name spill files in its own blob folder.
 */

import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { blobDirFor } from "../core/spill-layout.js";
import { removeAtExit } from "../io/exit-cleanup.js";
import { fsyncFolder } from "../io/place-spill-copy.js";
import { kindOf, lstatOrNothing, NotRegularFileError, sameFile } from "../io/regular-file.js";
import { isAlive } from "../io/session-lock.js";
import { CliError, describeError } from "./errors.js";
import { writeSelfContainedCopy } from "./out-spills.js";
import { readHeaderId } from "./preflight.js";

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

/** Temporary copies are `.<out name>.chainpress-out-<pid>-<random>`: the pid lets a later run sweep a killed run's leftover. */
const OUT_TEMP_MARK = ".chainpress-out-";

/** The `--out` copy while it is made: a temporary file beside the target, compacted there, then renamed. */
export interface StagedOutCopy {
  /** The temporary file (compactSession works on it). */
  readonly path: string;
  readonly target: string;
  /** Stops the exit-time removal once the file is renamed or removed. */
  readonly forget: () => void;
}

/**
 * A self-contained copy of the input in a new temporary file beside `out` (after checkOutTarget):
 * its records name spill files in its own blob folder, verified and placed there first. Nothing
 * is at `out` yet; a failure removes the temporary file.
 */
export async function stageOutCopy(input: string, out: string): Promise<StagedOutCopy> {
  const inputStat = fs.statSync(input);
  const temp = path.join(path.dirname(path.resolve(out)), `.${path.basename(out)}${OUT_TEMP_MARK}${process.pid}-${randomBytes(4).toString("hex")}`);
  const forget = removeAtExit(temp);
  try {
    const fd = openOutTemp(temp, inputStat.mode & 0o7777);
    try {
      await writeSelfContainedCopy(input, fd, out, inputStat.mode);
      fs.fsyncSync(fd);
      return { path: temp, target: out, forget };
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    removeTemp(temp, forget);
    // A write error (ENOSPC, EFBIG) names no file by itself.
    throw error instanceof CliError ? error : new CliError(`${out}: cannot write the copy: ${describeError(error)}; --out wrote no copy`, { cause: error });
  }
}

/**
 * Puts the compacted copy at its target: fsync, then rename, then the folder's fsync. Without
 * `force` nothing at the target is ever replaced (link(2), then the temporary name goes); with
 * it, only a regular file that is not the input, checked right before the rename.
 */
export function commitOutCopy(staged: StagedOutCopy, input: string, force: boolean): void {
  const { path: temp, target } = staged;
  const fd = fs.openSync(temp, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (force) {
    const there = lstatOrNothing(target);
    if (there !== undefined && !there.isFile()) throw new NotRegularFileError(target, kindOf(there), "--out");
    if (there !== undefined && sameFile(there, fs.statSync(input))) throw new CliError(`${target}: --out is the input ${input}; name another file`);
    fs.renameSync(temp, target);
  } else {
    linkNoReplace(temp, target);
  }
  try {
    if (!force) fs.unlinkSync(temp);
    staged.forget();
    fsyncFolder(path.dirname(path.resolve(target)));
  } catch (error) {
    throw new CopyPlacedError(`${target}: the copy is in place, but ${describeError(error)}`, { cause: error });
  }
}

/** A failure after the finished copy reached its target: the copy stays. */
export class CopyPlacedError extends CliError {}

/** Removes the temporary copy of a failed run; the target was never touched. */
export function discardOutCopy(staged: StagedOutCopy): void {
  removeTemp(staged.path, staged.forget);
}

/** A failure while the temporary copy was compacted, told with the target's name. */
export function failedOutCopy(staged: StagedOutCopy, error: unknown): CliError {
  return new CliError(`${describeError(error).replaceAll(staged.path, staged.target)}; --out wrote no copy`, { cause: error });
}

/** Removes temporary copies beside `out` whose writer is gone (a killed run); returns their paths. */
export function sweepOutTemps(out: string): string[] {
  const folder = path.dirname(path.resolve(out));
  const prefix = `.${path.basename(out)}${OUT_TEMP_MARK}`;
  const removed: string[] = [];
  for (const name of fs.readdirSync(folder)) {
    // The copy itself, or the temporary file of its version-3 migration (atomic-write.ts).
    const own = name.startsWith(prefix) ? name : name.startsWith(`.${prefix}`) ? name.slice(1) : undefined;
    const match = own === undefined ? null : /^(\d+)-[0-9a-f]{8}(?:\.chainpress-tmp-\d+-[0-9a-f]{8})?$/.exec(own.slice(prefix.length));
    if (match === null || isAlive(Number(match[1]))) continue;
    const file = path.join(folder, name);
    if (!fs.lstatSync(file).isFile()) continue;
    fs.rmSync(file, { force: true });
    removed.push(file);
  }
  return removed;
}

/** O_EXCL and O_NOFOLLOW: a new file under a fresh name, never anything that was there. */
function openOutTemp(temp: string, mode: number): number {
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
  return fs.openSync(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK, mode);
}

function linkNoReplace(temp: string, target: string): void {
  try {
    fs.linkSync(temp, target);
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    if (code === "EEXIST") throw new CliError(`${target}: already exists (use --force to overwrite); --out wrote no copy`);
    if (!NO_HARD_LINKS.has(code)) throw error;
  }
  // A file system without hard links: the check right before the rename is the best there is.
  if (lstatOrNothing(target) !== undefined) throw new CliError(`${target}: already exists (use --force to overwrite); --out wrote no copy`);
  fs.renameSync(temp, target);
}

const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

function removeTemp(temp: string, forget: () => void): void {
  const there = lstatOrNothing(temp);
  if (there !== undefined && there.isFile()) fs.unlinkSync(temp);
  forget();
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
