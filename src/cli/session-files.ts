/**
 * Which session files a command line names: files as given, folders walked recursively for
 * `*.jsonl` (pi's `~/.pi/agent/sessions/<cwd>/<file>.jsonl` layout). Sorted by path so two runs
 * over the same tree process sessions in the same order. A missing path is kept, so the
 * per-session error ("no such file") names it.
 */

import fs from "node:fs";
import path from "node:path";

export async function expandSessionPaths(inputs: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  const seen = new Set<string>();
  for (const input of inputs) {
    const found = isDirectory(input) ? await walkJsonl(input) : [input];
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
