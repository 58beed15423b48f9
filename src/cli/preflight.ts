/**
 * Checks made before compact touches a session, so a refusal never leaves anything half done:
 * the file exists and has been quiet for a few seconds (pi appends while it runs), and the
 * spill folder can be written (a worker that cannot spill would otherwise only skip chains,
 * after the version-1 migration rewrite already happened).
 */

import fs from "node:fs";
import path from "node:path";
import { blobDirFor } from "../core/spill-layout.js";
import { SessionFileError } from "../io/session-errors.js";
import { CliError } from "./errors.js";

/** A session written to within this window may be mid-append by pi. */
export const QUIET_MS = 5_000;

/** Refuses a missing file, or one that is not a regular file (a folder, a device). */
export function assertSessionFile(file: string): fs.Stats {
  const stat = statOrNotFound(file);
  if (!stat.isFile()) throw new CliError(`${file}: not a regular file`);
  return stat;
}

/**
 * How far ahead of the clock a modification time may be and still read as "just now": mtimes
 * carry sub-millisecond precision while `Date.now()` truncates, and another process's write in
 * the current millisecond would otherwise look like clock skew.
 */
const CLOCK_SLACK_MS = 1_000;

/** Refuses a missing, non-regular, or recently modified file (the latter unless forced). */
export function checkQuiet(file: string, force: boolean, now = Date.now()): void {
  const stat = assertSessionFile(file);
  const ageMs = now - stat.mtimeMs;
  // A modification time in the future (clock skew) is as suspicious as a recent one.
  if (!force && ageMs < QUIET_MS) {
    throw new CliError(`${file}: modified ${describeAge(ageMs)}; pi may still be writing it (wait ${QUIET_MS / 1000} s, or use --force)`);
  }
}

function describeAge(ageMs: number): string {
  if (ageMs < -CLOCK_SLACK_MS) return "in the future";
  return `${(Math.max(0, ageMs) / 1000).toFixed(1)} s ago`;
}

function statOrNotFound(file: string): fs.Stats {
  try {
    return fs.statSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new SessionFileError("not-found", file, "no such file");
    throw error;
  }
}

/** Refuses when `<session folder>/<session id>-blobs/` exists but is unusable, or cannot be created. */
export function checkBlobDir(file: string): void {
  const sessionId = readHeaderId(file);
  // No readable header: reading the session reports that, with its line number.
  if (sessionId === undefined) return;
  const sessionDir = path.dirname(path.resolve(file));
  const blobDir = blobDirFor(sessionDir, sessionId);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(blobDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new CliError(`${blobDir}: spill folder unreadable: ${(error as Error).message}`);
    assertAccess(sessionDir, fs.constants.W_OK | fs.constants.X_OK, `${blobDir}: cannot create the spill folder`);
    return;
  }
  if (!stat.isDirectory()) throw new CliError(`${blobDir}: spill folder is not a directory`);
  assertAccess(blobDir, fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK, `${blobDir}: spill folder is not readable and writable`);
}

function assertAccess(target: string, mode: number, what: string): void {
  try {
    fs.accessSync(target, mode);
  } catch (error) {
    throw new CliError(`${what}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** The header's `id`, read from the first line only (at most 1 MiB); undefined when unreadable. */
export function readHeaderId(file: string): string | undefined {
  const fd = fs.openSync(file, "r");
  try {
    const buffer = Buffer.alloc(1024 * 1024);
    const length = fs.readSync(fd, buffer, 0, buffer.length, 0);
    const newline = buffer.subarray(0, length).indexOf(0x0a);
    const first = buffer.subarray(0, newline === -1 ? length : newline).toString("utf8").replace(/^\uFEFF/, "");
    const header = JSON.parse(first) as { type?: unknown; id?: unknown };
    return header.type === "session" && typeof header.id === "string" ? header.id : undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}
