/**
 * Writing `chainpress query --parts DIR`'s files. The folder must be a real folder (made when
 * missing; a link to one is refused, as the blob folder's is), and each file is written
 * atomically (io/atomic-write.ts: a temporary name opened O_EXCL, fsynced, renamed over the
 * name): a failure leaves no half-written file, and nothing is written through a link or onto
 * anything but a regular file.
 */

import fs from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "./atomic-write.js";
import { kindOf } from "./regular-file.js";

/** Something other than a folder is where `--parts` writes. */
export class PartsFolderError extends Error {
  override readonly name = "PartsFolderError";
  constructor(
    readonly path: string,
    readonly kind: string,
  ) {
    super(`${path}: the --parts folder is ${kind}, not a folder; chainpress writes nothing through it and leaves it as it is`);
  }
}

/** Makes `dir` when nothing is there; throws PartsFolderError naming what is there when it is not a folder. */
export function preparePartsDir(dir: string): void {
  let stat = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (stat === undefined) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    stat = fs.lstatSync(dir);
  }
  if (!stat.isDirectory()) throw new PartsFolderError(dir, kindOf(stat));
}

/** Writes one part's file in `dir` (prepared, and checked again: still a folder, not a link), replacing a regular file of that name. Returns its path. */
export async function writePartFile(dir: string, name: string, bytes: Uint8Array, mode: number): Promise<string> {
  const stat = fs.lstatSync(dir);
  if (!stat.isDirectory()) throw new PartsFolderError(dir, kindOf(stat));
  const file = path.join(dir, name);
  await writeFileAtomic(file, [bytes], { mode, role: "part file" });
  return file;
}
