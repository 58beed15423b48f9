/** A fresh copy of a fixture for one measured run, in its own temporary folder. */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface ScratchCopy {
  dir: string;
  file: string;
  remove(): void;
}

/**
 * The copy's mtime is set an hour back: chainpress refuses a session modified in the last few
 * seconds (pi may be writing it). Runs also pass --force, but an old mtime keeps the copy looking
 * like a real, idle session to any other check.
 */
export function freshCopy(fixture: string, label: string): ScratchCopy {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `chainpress-compare-${label}-`));
  const file = path.join(dir, path.basename(fixture));
  fs.copyFileSync(fixture, file);
  const past = new Date(Date.now() - 3_600_000);
  fs.utimesSync(file, past, past);
  return { dir, file, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Byte sizes of the files in the `*-blobs` folder(s) a run wrote next to its session. */
export function spillSizes(dir: string): number[] {
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith("-blobs"))
    .flatMap((blobs) => fs.readdirSync(path.join(dir, blobs)).map((name) => fs.statSync(path.join(dir, blobs, name)).size));
}
