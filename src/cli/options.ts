/**
 * Option value parsers for commander. They throw InvalidArgumentError, which commander turns
 * into a usage error (exit 2) naming the option, so a typo never silently becomes a default.
 */

import fs from "node:fs";
import os from "node:os";
import { InvalidArgumentError, type Command } from "commander";
import { DEFAULT_PROTECTED_PATHS } from "../core/defaults.js";
import { isSmallSession } from "../main/small-session.js";

/** A whole number ≥ `min`, written as plain digits (no "1e3", "0x10", "2.5"). */
export function integerParser(min: number): (value: string) => number {
  return (value) => {
    const trimmed = value.trim();
    if (!/^\d+$/.test(trimmed)) throw new InvalidArgumentError(`expected a whole number ≥ ${min}, got "${value}"`);
    const n = Number(trimmed);
    if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`expected a whole number ≥ ${min}, got "${value}"`);
    return n;
  };
}

/** A comma-separated list; empty items are dropped, so `--protected-tools ""` means none. */
export function listParser(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

/**
 * One worker per available core. The main thread does not need a core of its own: it waits on the
 * workers most of the time. Keeping one back was the slowest choice on a 2-core machine, where it
 * left a single worker doing all the work of an inline run plus the hand-off (bench/RESULTS.md).
 */
export function defaultWorkers(): number {
  return Math.max(1, os.availableParallelism());
}

/**
 * `compact`'s default: one worker per core, but none when the sessions named are files under
 * SMALL_SESSION_BYTES in all, which an inline run compacts sooner than a pool starts. A folder
 * may hold any number of sessions: it gets the pool.
 */
export function compactWorkersFor(sessions: readonly string[]): number {
  let bytes = 0;
  for (const session of sessions) {
    const info = fs.statSync(session, { throwIfNoEntry: false });
    // Not a file: the pool's default, and the reader names the problem.
    if (!info?.isFile()) return defaultWorkers();
    bytes += info.size;
  }
  return isSmallSession(bytes) ? 0 : defaultWorkers();
}

/**
 * `--workers` bounded by the machine: threads beyond the available parallelism only add memory
 * and start-up time, so the request is capped, with a note saying so.
 */
export function capWorkers(requested: number, available = os.availableParallelism()): { workers: number; note?: string } {
  if (requested <= available) return { workers: requested };
  return { workers: available, note: `--workers ${requested} is more than this machine's available parallelism (${available}); using ${available}` };
}

/** What render and stats re-check at render time; compact's options of the same names. */
export interface ProtectionFlags {
  protectedTools?: string[];
  protectedPaths?: string[];
}

/** Adds --protected-tools / --protected-paths, with the same meaning and defaults everywhere. */
export function addProtectionOptions(command: Command): Command {
  return command
    .option("--protected-tools <names>", "comma-separated tool names whose outputs are never archived (default: none)", listParser)
    .option("--protected-paths <globs>", `comma-separated globs of protected \`path\` arguments (default: ${DEFAULT_PROTECTED_PATHS.join(",")})`, listParser);
}

/** `--follow-links`, on every command that takes sessions (cli/session-path.ts holds the rule). */
export interface FollowLinksFlag {
  followLinks?: boolean;
}

/** The read commands' help line for --follow-links. */
export const FOLLOW_LINKS_READ_HELP =
  "\nA session path that is a symbolic link is refused unless --follow-links, which reads the file\nit names by its real path, with the spill folder beside that file.";

/** Adds --follow-links with the same words everywhere. */
export function addFollowLinksOption(command: Command): Command {
  return command.option(
    "--follow-links",
    "follow a session path that is a symbolic link: use the real path of the file it names for everything (default: refuse it)",
  );
}
