/**
 * Giving a session copy its own spill files: a file of the input's blob folder is checked
 * against what its record says (length, digest, content hash) and then appears under the same
 * name in the copy's blob folder, hard-linked where the disk allows, else copied through a
 * temporary file. Nothing already there is ever replaced: a file of that name that holds the
 * same bytes is kept, any other one fails the copy. Each placed file is fsynced; the caller
 * fsyncs the folder.
 */

import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { threadId } from "node:worker_threads";
import { contentHash } from "../core/content-hash.js";
import { digestMatches, type Hasher } from "../core/digest.js";
import { removeAtExit } from "./exit-cleanup.js";
import { kindOf, lstatOrNothing, openRegularForReading, readAtMost } from "./regular-file.js";

/** What a record says its spill file holds. */
export interface SpillExpectation {
  toolName: string;
  spillBytes?: number;
  spillDigest?: string;
  contentHash?: string;
}

/** A spill file that is missing, damaged or in the way; the message names the file. */
export class SpillCopyError extends Error {
  override readonly name = "SpillCopyError";
}

export type Placed = "linked" | "copied" | "present";

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
/** write-spill.ts's temporary name, so a killed run's leftover is swept like a spill's. */
const TEMP_PREFIX = ".tmp-";
/** link(2) cannot join these two names (another device, a file system without hard links). */
const NO_LINK = new Set(["EXDEV", "EPERM", "ENOTSUP", "EOPNOTSUPP", "EMLINK", "ENOSYS"]);

/** Makes `source`'s verified bytes appear at `destination`, which is left alone if it already holds them. */
export function placeSpillCopy(source: string, destination: string, expected: SpillExpectation, fileMode: number, hasher: Hasher): Placed {
  if (keepsExisting(destination, expected, hasher)) return "present";
  const { fd, stat, bytes } = readVerified(source, expected, hasher);
  try {
    const linked = linkVerified(source, stat, destination, expected, hasher);
    if (linked !== undefined) {
      fs.fsyncSync(fd);
      return linked;
    }
  } finally {
    fs.closeSync(fd);
  }
  return copyThroughTemp(bytes, destination, expected, fileMode, hasher);
}

/** Creates the copy's blob folder (a real folder, never a link); true when it was made now. */
export function ensureBlobFolder(blobDir: string, dirMode: number): boolean {
  try {
    fs.mkdirSync(blobDir, { mode: dirMode });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const stat = fs.lstatSync(blobDir);
  if (!stat.isDirectory()) throw new SpillCopyError(`${blobDir}: spill folder is ${kindOf(stat)}, not a folder; chainpress writes no spill file through it`);
  return false;
}

/** fsync(2) of a folder, so the names made in it last. */
export function fsyncFolder(folder: string): void {
  const fd = fs.openSync(folder, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function readVerified(file: string, expected: SpillExpectation, hasher: Hasher): { fd: number; stat: fs.Stats; bytes: Buffer } {
  let opened: { fd: number; stat: fs.Stats };
  try {
    opened = openRegularForReading(file, "spill file");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new SpillCopyError(code === "ENOENT" ? `spill file not found: ${file}` : `cannot read spill file ${file}: ${(error as Error).message}`);
  }
  try {
    const sized = sizeProblem(opened.stat.size, expected);
    if (sized !== undefined) throw new SpillCopyError(`spill file ${file} ${sized}`);
    // One byte past the size tells a file that grew since fstat.
    const bytes = readAtMost(opened.fd, opened.stat.size + 1);
    const problem = contentProblem(bytes, expected, hasher);
    if (problem !== undefined) throw new SpillCopyError(`spill file ${file} ${problem}`);
    return { ...opened, bytes };
  } catch (error) {
    fs.closeSync(opened.fd);
    throw error;
  }
}

function sizeProblem(size: number, expected: SpillExpectation): string | undefined {
  if (expected.spillBytes !== undefined && size !== expected.spillBytes) return `has ${size} bytes, expected ${expected.spillBytes}`;
  return undefined;
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The checks `query` makes before it shows a spilled output. */
function contentProblem(bytes: Uint8Array, expected: SpillExpectation, hasher: Hasher): string | undefined {
  const sized = sizeProblem(bytes.length, expected);
  if (sized !== undefined) return sized;
  if (expected.spillDigest !== undefined) {
    return digestMatches(hasher, expected.spillDigest, bytes) ? undefined : `does not match its recorded digest ${expected.spillDigest}`;
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return "is not valid UTF-8";
  }
  if (expected.contentHash !== undefined && contentHash(expected.toolName, text) !== expected.contentHash) return `does not match its recorded content hash ${expected.contentHash}`;
  return undefined;
}

/** A regular file already at `destination` holding the expected bytes is kept; anything else there is refused. */
function keepsExisting(destination: string, expected: SpillExpectation, hasher: Hasher): boolean {
  const there = lstatOrNothing(destination);
  if (there === undefined) return false;
  if (!there.isFile()) throw new SpillCopyError(`${destination}: spill file is ${kindOf(there)}, not a regular file; chainpress leaves it as it is`);
  const { fd, stat } = openRegularForReading(destination, "spill file");
  try {
    const problem = sizeProblem(stat.size, expected) ?? contentProblem(readAtMost(fd, stat.size + 1), expected, hasher);
    if (problem === undefined) return true;
    throw new SpillCopyError(`${destination} already holds another file (it ${problem}); chainpress replaces no spill file`);
  } finally {
    fs.closeSync(fd);
  }
}

/** A hard link, kept only if it is the very file that was verified; undefined where the disk cannot link. */
function linkVerified(source: string, verified: fs.Stats, destination: string, expected: SpillExpectation, hasher: Hasher): Placed | undefined {
  try {
    fs.linkSync(source, destination);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    if (NO_LINK.has(code)) return undefined;
    if (code === "EEXIST" && keepsExisting(destination, expected, hasher)) return "present";
    throw error;
  }
  const linked = fs.lstatSync(destination);
  if (linked.dev !== verified.dev || linked.ino !== verified.ino) {
    fs.unlinkSync(destination);
    throw new SpillCopyError(`spill file ${source} was replaced while it was being linked; rerun`);
  }
  return "linked";
}

function copyThroughTemp(bytes: Buffer, destination: string, expected: SpillExpectation, fileMode: number, hasher: Hasher): Placed {
  const temp = path.join(path.dirname(destination), `${TEMP_PREFIX}${process.pid}-${threadId}-${randomBytes(4).toString("hex")}-${path.basename(destination)}`);
  const forget = removeAtExit(temp);
  try {
    const fd = fs.openSync(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, fileMode);
    try {
      fs.fchmodSync(fd, fileMode);
      let written = 0;
      while (written < bytes.length) written += fs.writeSync(fd, bytes, written, bytes.length - written);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    placeNoReplace(temp, destination);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST" && keepsExisting(destination, expected, hasher)) return "present";
    throw error;
  } finally {
    fs.rmSync(temp, { force: true });
    forget();
  }
  return "copied";
}

/**
 * link(2), not rename(2): a file that appeared at the name meanwhile is never replaced. Where the
 * file system has no hard links, a rename right after a check that the name is free.
 */
function placeNoReplace(temp: string, destination: string): void {
  try {
    fs.linkSync(temp, destination);
  } catch (error) {
    if (!NO_LINK.has((error as NodeJS.ErrnoException).code ?? "")) throw error;
    if (lstatOrNothing(destination) !== undefined) throw Object.assign(new Error(`${destination} exists`), { code: "EEXIST" });
    fs.renameSync(temp, destination);
  }
}
