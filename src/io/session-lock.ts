/**
 * Advisory lock for one session file: `<file>.chainpress.lock`, created with O_EXCL and holding
 * the owner's pid and hostname. Only chainpress honours it (pi does not know it); it keeps two
 * chainpress runs from appending to the same session at once. A lock whose pid is dead on this
 * host is stale and taken over; a lock from another host is never judged stale (we cannot see
 * its processes). Held locks are removed on exit, SIGINT and SIGTERM.
 */

import fs from "node:fs";
import os from "node:os";
import { readSmallRegularFile } from "./regular-file.js";

export const LOCK_SUFFIX = ".chainpress.lock";

/** A lock file that could not be parsed is only judged stale after this long (its writer may be mid-write). */
const UNPARSEABLE_STALE_MS = 10_000;

/**
 * Lock files this process holds, removed by the exit/signal handlers. Process-wide on purpose: the
 * handlers are the process's, and must find every lock whoever took it.
 */
const held = new Set<string>();
let handlersInstalled = false;

export interface LockOwner {
  pid: number;
  hostname: string;
  /** ISO time the lock was taken. */
  since: string;
}

/** The lock file could not be created or written (a full disk, a read-only folder); names its path. */
export class LockFileError extends Error {
  override readonly name = "LockFileError";
  constructor(
    readonly lockPath: string,
    readonly code: string | undefined,
    detail: string,
  ) {
    super(`${lockPath}: cannot take the session lock: ${detail}`);
  }
}

/** Another live process holds the lock. */
export class SessionLockedError extends Error {
  override readonly name = "SessionLockedError";
  constructor(
    readonly file: string,
    readonly lockPath: string,
    readonly owner: LockOwner | null,
  ) {
    const who = owner ? `pid ${owner.pid} on ${owner.hostname} since ${owner.since}` : "an unknown process";
    super(`${file}: locked by another chainpress (${who}); remove ${lockPath} if that process is gone`);
  }
}

export interface SessionLock {
  readonly lockPath: string;
  /** Removes the lock file; safe to call twice. */
  release(): void;
}

export function lockPathFor(file: string): string {
  return `${file}${LOCK_SUFFIX}`;
}

/** Takes the lock or throws SessionLockedError; a stale lock is replaced (one retry). */
export function acquireSessionLock(file: string): SessionLock {
  const lockPath = lockPathFor(file);
  // Before the file exists: a signal between its creation and the handlers would kill the
  // process by default and leave the lock behind.
  installHandlers();
  const mode = lockModeFor(file);
  for (let attempt = 0; attempt < 2; attempt++) {
    if (tryCreate(lockPath, mode)) return registerHeld(lockPath);
    const seen = readLock(lockPath);
    if (seen === undefined) continue; // vanished between our create and read: retry
    if (!isStale(lockPath, seen.owner)) throw new SessionLockedError(file, lockPath, seen.owner);
    removeIfUnchanged(lockPath, seen.raw);
  }
  throw new SessionLockedError(file, lockPath, readLock(lockPath)?.owner ?? null);
}

/** The session file's read/write bits: the lock reveals no more than the session does. */
function lockModeFor(file: string): number {
  try {
    return fs.statSync(file).mode & 0o666;
  } catch {
    // No session file (a caller's own check reports that): owner-only.
    return 0o600;
  }
}

function lockFileError(lockPath: string, error: unknown): LockFileError {
  const code = (error as NodeJS.ErrnoException).code;
  return new LockFileError(lockPath, code, (error as Error).message);
}

function tryCreate(lockPath: string, mode: number): boolean {
  let fd: number;
  try {
    fd = fs.openSync(lockPath, "wx", mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw lockFileError(lockPath, error);
  }
  // Registered at once, so an exit or signal from here on removes it.
  held.add(lockPath);
  try {
    const owner: LockOwner = { pid: process.pid, hostname: os.hostname(), since: new Date().toISOString() };
    // open(2) applies the umask; the lock must have exactly the session file's bits.
    fs.fchmodSync(fd, mode);
    // Not fsynced: the lock keeps out live processes, which read its bytes from the page cache at
    // once; after a machine crash an unsynced lock is at worst empty, and an unparseable lock is
    // stale once UNPARSEABLE_STALE_MS old. An fsync would delay every CLI run's first shard.
    fs.writeSync(fd, `${JSON.stringify(owner)}\n`);
  } catch (error) {
    forget(lockPath);
    throw lockFileError(lockPath, error);
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

interface SeenLock {
  raw: string;
  owner: LockOwner | null;
}

/** A lock path holding anything but a regular file is refused (NotRegularFileError), never judged stale and removed. */
function readLock(lockPath: string): SeenLock | undefined {
  const raw = readSmallRegularFile(lockPath, "session lock");
  return raw === undefined ? undefined : { raw, owner: parseOwner(raw) };
}

function parseOwner(raw: string): LockOwner | null {
  try {
    const value = JSON.parse(raw) as Partial<LockOwner>;
    if (typeof value.pid === "number" && typeof value.hostname === "string") {
      return { pid: value.pid, hostname: value.hostname, since: typeof value.since === "string" ? value.since : "?" };
    }
  } catch {
    // fall through: not ours, or half-written
  }
  return null;
}

function isStale(lockPath: string, owner: LockOwner | null): boolean {
  if (owner === null) return lockAgeMs(lockPath) > UNPARSEABLE_STALE_MS;
  if (owner.hostname !== os.hostname()) return false;
  return !isAlive(owner.pid);
}

function lockAgeMs(lockPath: string): number {
  try {
    return Date.now() - fs.statSync(lockPath).mtimeMs;
  } catch {
    return 0;
  }
}

/** Signal 0 checks existence; EPERM means it exists but belongs to another user. */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Re-reading right before unlinking narrows (does not close) the window in which two processes
 * that both judged the same lock stale could remove each other's fresh lock.
 */
function removeIfUnchanged(lockPath: string, raw: string): void {
  if (readLock(lockPath)?.raw !== raw) return;
  try {
    fs.unlinkSync(lockPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

function registerHeld(lockPath: string): SessionLock {
  return { lockPath, release: () => forget(lockPath) };
}

/** Removes a lock this process holds; a second call does nothing. */
function forget(lockPath: string): void {
  if (!held.delete(lockPath)) return;
  fs.rmSync(lockPath, { force: true });
}

function releaseAll(): void {
  for (const lockPath of held) fs.rmSync(lockPath, { force: true });
  held.clear();
}

/**
 * Once per process. A SIGINT/SIGTERM listener replaces Node's default exit, so it must exit
 * itself, with the conventional 128 + signal number.
 */
function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on("exit", releaseAll);
  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    process.once(signal, () => {
      releaseAll();
      process.exit(code);
    });
  }
}
