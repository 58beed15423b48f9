/**
 * A session path whose last component is a symbolic link: refused by every command, even with
 * --force, unless --follow-links; then resolved here, once, to the real path of the file it names,
 * and only that path is used afterwards (entries, spill folder, locks, `.bak`, live-lock checks).
 * A link higher up (a sessions folder on another disk) is an ordinary path and passes as it is.
 */

import fs from "node:fs";
import path from "node:path";
import { lstatOrNothing } from "../io/regular-file.js";
import { CliError } from "./errors.js";

/** The flag, as every command that takes sessions spells it. */
export const FOLLOW_LINKS_FLAG = "--follow-links";

/** A session as named on the command line (or found in a folder), and the path chainpress uses. */
export interface SessionPath {
  named: string;
  /** `named`, or with --follow-links the real path of the file a final link names. */
  file: string;
}

/** What a symbolic link names, as an absolute path (a relative target is read from the link's folder). */
export function linkTargetOf(link: string): string {
  return path.resolve(path.dirname(link), fs.readlinkSync(link));
}

/** Whether the last component of `file` is a symbolic link (false when nothing is there). */
export function isSymbolicLink(file: string): boolean {
  return lstatOrNothing(file)?.isSymbolicLink() === true;
}

/** The path to use for the session named `named`; throws CliError for a final link without `followLinks`. */
export function resolveSessionPath(named: string, followLinks: boolean): SessionPath {
  if (!isSymbolicLink(named)) return { named, file: named };
  const target = linkTargetOf(named);
  if (!followLinks) {
    throw new CliError(
      `${named}: the session path is a symbolic link to ${target}; chainpress refuses it, even with --force ` +
        `(${FOLLOW_LINKS_FLAG} uses the file it names, with its spill folder, locks and backup beside that file)`,
    );
  }
  return { named, file: realPathOf(named, target) };
}

function realPathOf(link: string, target: string): string {
  try {
    return fs.realpathSync(link);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new CliError(`${link}: symbolic link to ${target}, which does not exist`);
    if (code === "ELOOP") throw new CliError(`${link}: symbolic link to ${target}, a loop of links`);
    throw new CliError(`${link}: symbolic link to ${target}, which cannot be resolved: ${(error as Error).message}`);
  }
}
