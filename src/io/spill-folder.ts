/**
 * The blob folder, `<session folder>/<id>-blobs`, must be a real folder inside the session's
 * folder before any file is created in it: a symbolic link there (or anything but a folder)
 * would send spill files elsewhere, replacing what is there. Checked where the folder is created
 * (the chain task, on its worker) and again where files are placed in it (the settle, on the
 * thread that commits), since the two are apart in time.
 */

import fs from "node:fs";
import path from "node:path";
import { kindOf, lstatOrNothing, sameFile } from "./regular-file.js";
import { SpillWriteError } from "./spill-errors.js";

/** Creates the blob folder when nothing is there, then checks it (see checkBlobDir). */
export function ensureBlobDir(blobDir: string, dirMode: number): void {
  if (lstatOrNothing(blobDir) === undefined) {
    try {
      fs.mkdirSync(blobDir, { mode: dirMode });
    } catch (error) {
      // Another writer made it first: it is checked as any existing folder is.
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  checkBlobDir(blobDir);
}

/**
 * Throws a `spill-refused` SpillWriteError unless `blobDir` is a folder itself (lstat: a link is
 * refused, even to a folder) whose parent, by device and inode, is the folder it is named in:
 * the session's. Links higher up (a sessions folder that is a link) are followed as usual.
 */
export function checkBlobDir(blobDir: string): void {
  const stat = lstatOrNothing(blobDir);
  if (stat === undefined) throw new SpillWriteError(`${blobDir}: the spill folder is gone`, "write-failed");
  if (!stat.isDirectory()) {
    throw new SpillWriteError(`${blobDir}: spill folder is ${kindOf(stat)}, not a folder; chainpress writes nothing through it and leaves it as it is`, "spill-refused");
  }
  // `<blobDir>/..` as the kernel resolves it: not normalised away (path.join would).
  const parent = fs.statSync(`${blobDir}${path.sep}..`);
  if (!sameFile(parent, fs.statSync(path.dirname(blobDir)))) {
    throw new SpillWriteError(`${blobDir}: spill folder is not inside the session's folder ${path.dirname(blobDir)}; chainpress writes nothing in it`, "spill-refused");
  }
}
