/**
 * Which session files a command line names: files as given, folders walked recursively for
 * `*.jsonl` (pi's `~/.pi/agent/sessions/<cwd>/<file>.jsonl` layout). Sorted by path so two runs
 * over the same tree process sessions in the same order. A missing path is kept, so the
 * per-session error ("no such file") names it. A `*.jsonl` file found in a folder whose first
 * line is not a pi session header (another tool's log, say) is left out and reported through
 * `onSkip`; a file named on the command line is always kept, so its error is shown.
 */

import fs from "node:fs";
import path from "node:path";
import { readHeaderId } from "./preflight.js";

export async function expandSessionPaths(inputs: readonly string[], onSkip?: (file: string, why: string) => void): Promise<string[]> {
  const files: string[] = [];
  const seen = new Set<string>();
  for (const input of inputs) {
    const found = isDirectory(input) ? (await walkJsonl(input)).filter((file) => isSessionOrSay(file, onSkip)) : [input];
    for (const file of found) {
      // The same session named twice would be locked against itself.
      const key = path.resolve(file);
      if (seen.has(key)) continue;
      seen.add(key);
      files.push(file);
    }
  }
  return files;
}

function isSessionOrSay(file: string, onSkip: ((file: string, why: string) => void) | undefined): boolean {
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
    .filter((entry) => entry.isFile() && entry.name.endsWith(".jsonl"))
    .map((entry) => path.join(entry.parentPath ?? entry.path, entry.name));
  return files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
