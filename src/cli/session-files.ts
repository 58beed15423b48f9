/**
 * Which session files a command line names: files as given, folders walked recursively for
 * `*.jsonl` (pi's `~/.pi/agent/sessions/<cwd>/<file>.jsonl` layout). Sorted by path so two runs
 * over the same tree process sessions in the same order. A missing path is kept, so the
 * per-session error ("no such file") names it. A `*.jsonl` file found in a folder whose first
 * line is not a pi session header (another tool's log, say) is left out and reported through
 * `onSkip`; a file named on the command line is always kept, so its error is shown.
 *
 * A `*.jsonl` symbolic link found in a folder is reported through `onSkip` and left out, unless
 * `followLinks`: then it is kept as found, and compacting resolves it (cli/session-path.ts). A
 * linked folder inside a walk is not entered (as `readdir` walks); a named folder that is a link
 * is walked, like any folder. One session reached by two paths is compacted once.
 */

import fs from "node:fs";
import path from "node:path";
import { readHeaderId } from "./preflight.js";
import { FOLLOW_LINKS_FLAG, isSymbolicLink, linkTargetOf } from "./session-path.js";

type OnSkip = (file: string, why: string) => void;

export async function expandSessionPaths(inputs: readonly string[], onSkip?: OnSkip, followLinks = false): Promise<string[]> {
  const files: string[] = [];
  const seen = new Set<string>();
  for (const input of inputs) {
    const found = isDirectory(input) ? (await walkJsonl(input)).filter((file) => isFollowedOrSay(file, followLinks, onSkip) && isSessionOrSay(file, onSkip)) : [input];
    for (const file of found) {
      // The same session named twice would be locked against itself.
      const key = identityKey(file, followLinks);
      if (seen.has(key)) continue;
      seen.add(key);
      files.push(file);
    }
  }
  return files;
}

/** A link found in a folder is compacted only with --follow-links; without, it is said and left out. */
function isFollowedOrSay(file: string, followLinks: boolean, onSkip: OnSkip | undefined): boolean {
  if (followLinks || !isSymbolicLink(file)) return true;
  onSkip?.(file, `a symbolic link to ${linkTargetOf(file)}; not followed (use ${FOLLOW_LINKS_FLAG} to compact the file it names)`);
  return false;
}

/**
 * The session's real path where it can be known (a session reached through a linked folder and
 * through its own folder is one session), else the path as given: a link that is not followed
 * is refused on its own, and a path realpath cannot resolve (missing, unreadable) reports why
 * when it is compacted.
 */
function identityKey(file: string, followLinks: boolean): string {
  try {
    if (!followLinks && fs.lstatSync(file).isSymbolicLink()) return path.resolve(file);
    return fs.realpathSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== undefined) return path.resolve(file);
    throw error;
  }
}

function isSessionOrSay(file: string, onSkip: OnSkip | undefined): boolean {
  try {
    if (readHeaderId(file) !== undefined) return true;
  } catch {
    // Unreadable: kept, so compacting it reports why, like any other failing session.
    return true;
  }
  onSkip?.(file, "not a pi session (its first line is no session header)");
  return false;
}

function isDirectory(input: string): boolean {
  try {
    return fs.statSync(input).isDirectory();
  } catch {
    return false;
  }
}

async function walkJsonl(dir: string): Promise<string[]> {
  const entries = await fs.promises.readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => (entry.isFile() || entry.isSymbolicLink()) && entry.name.endsWith(".jsonl"))
    .map((entry) => path.join(entry.parentPath ?? entry.path, entry.name));
  return files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
