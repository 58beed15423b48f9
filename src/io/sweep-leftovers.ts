/**
 * Leftovers of a killed run: temporary spill files in the session's blob folder and temporary
 * copies of the session file (migration, --repair) in its folder. Both carry their writer's pid
 * in their names (write-spill.ts, atomic-write.ts); once that process is gone nothing will ever
 * rename them, so they are removed. A file whose writer is alive (a running pi's extension, a
 * concurrent chainpress) is left alone. Only names this project writes are ever touched, and
 * only as regular files in a real folder: a blob folder that is a symbolic link is not entered
 * (what it names is another folder, not ours; the spill writer refuses it).
 */

import fs from "node:fs";
import path from "node:path";
import { atomicTempWriterPid } from "./atomic-write.js";
import { lstatOrNothing } from "./regular-file.js";
import { isAlive } from "./session-lock.js";
import { spillTempWriterPid } from "./write-spill.js";

/** Removes the leftovers of dead writers for `sessionFile`; returns the paths removed. */
export function sweepLeftovers(sessionFile: string, blobDir: string | undefined): string[] {
  const removed: string[] = [];
  const sessionDir = path.dirname(path.resolve(sessionFile));
  for (const name of namesIn(sessionDir)) {
    const pid = atomicTempWriterPid(name, sessionFile);
    if (pid !== undefined && !isAlive(pid)) removeFile(path.join(sessionDir, name), removed);
  }
  // A blob folder that is a link is not swept: it names another folder (io/spill-folder.ts).
  if (blobDir !== undefined && lstatOrNothing(blobDir)?.isDirectory() === true) {
    for (const name of namesIn(blobDir)) {
      const pid = spillTempWriterPid(name);
      if (pid !== undefined && !isAlive(pid)) removeFile(path.join(blobDir, name), removed);
    }
  }
  return removed;
}

function namesIn(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch (error) {
    // No blob folder yet: nothing was ever spilled there.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

function removeFile(file: string, removed: string[]): void {
  // lstat: a link or a folder under one of our names is not something we wrote.
  if (!fs.lstatSync(file).isFile()) return;
  fs.rmSync(file, { force: true });
  removed.push(file);
}
