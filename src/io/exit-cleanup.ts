/**
 * Files a run made and must not leave behind if the process ends before it finishes with them
 * (an exception is handled by its caller; this covers `process.exit`, which the session lock's
 * SIGINT/SIGTERM handlers call). Process-wide on purpose: the exit event is the process's.
 */

import fs from "node:fs";

const pending = new Set<string>();
let installed = false;

/** Removes `file` at exit until the returned function is called (the file was renamed or removed). */
export function removeAtExit(file: string): () => void {
  if (!installed) {
    installed = true;
    process.on("exit", removePending);
  }
  pending.add(file);
  return () => void pending.delete(file);
}

function removePending(): void {
  for (const file of pending) {
    try {
      // lstat: only a regular file this run created under its own unique name.
      if (fs.lstatSync(file).isFile()) fs.unlinkSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") process.stderr.write(`chainpress: could not remove ${file}: ${(error as Error).message}\n`);
    }
  }
  pending.clear();
}
