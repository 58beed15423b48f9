/**
 * The live-session lock: while pi has a session open, the chainpress extension keeps
 * `<session>.chainpress.live` next to it, holding pi's pid, host and process start time. The CLI
 * reads it and keeps its hands off: entries it appended would end on a dead branch once pi
 * writes again (pi appends under its own in-memory leaf), and the extension would then archive
 * the chain a second time under the same block id and ref.
 *
 * The lock is advisory and never blocks pi. It is stale once its process is gone: a dead pid, or
 * a live pid whose start time differs (the pid was reused). A lock from another host is taken at
 * its word (we cannot see its processes). The holder removes it on session switch, shutdown and
 * process exit; a lock left by a killed pi is simply stale.
 */

import fs from "node:fs";
import os from "node:os";
import { isAlive } from "./session-lock.js";
import { writeFileAtomic } from "./atomic-write.js";
import { readSmallRegularFile } from "./regular-file.js";

export const LIVE_LOCK_SUFFIX = ".chainpress.live";

export interface LiveOwner {
  pid: number;
  hostname: string;
  /** The process's start time as the OS reports it (Linux: clock ticks after boot); null when unknown. */
  processStart: string | null;
  /** ISO time the session was opened. */
  since: string;
}

export interface LiveSessionLock {
  readonly lockPath: string;
  /** Removes the lock if it is still ours; safe to call twice. */
  release(): void;
}

export function liveLockPathFor(sessionFile: string): string {
  return `${sessionFile}${LIVE_LOCK_SUFFIX}`;
}

/** Live locks this process holds, removed on exit (process-wide on purpose, as the exit handler is). */
const held = new Map<string, string>();
let exitHandlerInstalled = false;

/**
 * Mark `sessionFile` as open in this process. Written atomically: a reader never sees half a lock.
 */
export async function holdLiveSession(sessionFile: string): Promise<LiveSessionLock> {
  const lockPath = liveLockPathFor(sessionFile);
  const owner: LiveOwner = { pid: process.pid, hostname: os.hostname(), processStart: processStartOf(process.pid), since: new Date().toISOString() };
  const raw = `${JSON.stringify(owner)}\n`;
  installExitHandler();
  // World-readable on purpose: it holds no secret (pid, host, start time), the folder's own
  // permissions guard it, and a CLI that could not read it would have to guess.
  await writeFileAtomic(lockPath, [raw], { mode: 0o644, role: "live-session marker" });
  held.set(lockPath, raw);
  return { lockPath, release: () => releaseIfOurs(lockPath) };
}

/** The live process that has `sessionFile` open, or null (no lock, or a stale one). */
export function liveSessionOwner(sessionFile: string): LiveOwner | null {
  const raw = readSmallRegularFile(liveLockPathFor(sessionFile), "live-session marker");
  if (raw === undefined) return null;
  const owner = parseOwner(raw);
  // A lock we cannot read is treated as held: refusing is the safe side, and --force overrides.
  if (owner === null) return { pid: 0, hostname: "?", processStart: null, since: "?" };
  if (owner.hostname !== os.hostname()) return owner;
  if (!isAlive(owner.pid)) return null;
  const start = processStartOf(owner.pid);
  if (owner.processStart !== null && start !== null && start !== owner.processStart) return null;
  return owner;
}

/** "open in pi (pid 123)", the words stats, --dry-run and refusals use. */
export function describeLiveOwner(owner: LiveOwner): string {
  const where = owner.hostname === os.hostname() ? "" : ` on ${owner.hostname}`;
  return `open in pi (pid ${owner.pid}${where})`;
}

function parseOwner(raw: string): LiveOwner | null {
  try {
    const value = JSON.parse(raw) as Partial<LiveOwner>;
    if (typeof value.pid !== "number" || typeof value.hostname !== "string") return null;
    return {
      pid: value.pid,
      hostname: value.hostname,
      processStart: typeof value.processStart === "string" ? value.processStart : null,
      since: typeof value.since === "string" ? value.since : "?",
    };
  } catch {
    // Not JSON (a foreign or damaged file): the caller decides what an unreadable lock means.
    return null;
  }
}

/**
 * Field 22 of /proc/<pid>/stat: the start time in clock ticks after boot. The command name
 * (field 2) may hold spaces and parentheses, so fields are counted after its last ")".
 * Null where /proc is missing (macOS) or the process is gone.
 */
export function processStartOf(pid: number): string | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    // No /proc here, or the process just exited: the start time is unknown.
    return null;
  }
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state), so field 22 is fields[19].
  return fields[19] ?? null;
}

function releaseIfOurs(lockPath: string): void {
  const raw = held.get(lockPath);
  if (raw === undefined) return;
  held.delete(lockPath);
  if (readSmallRegularFile(lockPath, "live-session marker") === raw) fs.rmSync(lockPath, { force: true });
}

function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.on("exit", () => {
    for (const lockPath of [...held.keys()]) {
      try {
        releaseIfOurs(lockPath);
      } catch {
        // Exiting: a lock that cannot be removed is stale as soon as this process is gone.
      }
    }
  });
}
