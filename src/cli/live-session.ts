/**
 * What compact does with a session pi has open (io/live-session-lock.ts): a session named on the
 * command line is refused unless --force; one found by walking a folder is skipped with a note
 * (the rest of the folder goes on); a dry run writes nothing, so it only says so.
 */

import { describeLiveOwner, liveSessionOwner } from "../io/live-session-lock.js";
import { CliError } from "./errors.js";

/** How a session came to be compacted: named itself, or found inside a named folder. */
export type SessionSource = "named" | "in-folder";

export type LiveDecision = { action: "go"; note?: string } | { action: "skip"; note: string };

export function liveSessionDecision(file: string, options: { dryRun: boolean; force: boolean; writesInPlace: boolean }, source: SessionSource): LiveDecision {
  const owner = liveSessionOwner(file);
  if (owner === null) return { action: "go" };
  const note = describeLiveOwner(owner);
  // --out only reads the input, and a dry run writes nothing: neither can end on a dead branch.
  if (options.dryRun || !options.writesInPlace || options.force) return { action: "go", note };
  if (source === "in-folder") return { action: "skip", note };
  throw new CliError(`${file}: ${note}; its entries would end on a dead branch once pi writes again (close the session in pi, or use --force)`);
}
