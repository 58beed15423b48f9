/**
 * Loading a session for the read-only commands (render, query, stats). Malformed lines are
 * skipped with a warning, as pi's own loader skips them: these commands show what pi and the
 * model see, and must work on exactly the sessions pi opens. Nothing is written. A session path
 * that is a symbolic link is refused unless --follow-links (cli/session-path.ts); the model's
 * `loaded.file` is then the real path, and its spill folder the one beside that file.
 */

import fs from "node:fs";
import { mapBudgetOf } from "../core/archive-map.js";
import { makeProtectionPredicate } from "../core/protection.js";
import type { PruneOptions } from "../core/render/prune-messages.js";
import { formatReconstructWarning } from "../core/reconstruct.js";
import { readSession } from "../io/read-session.js";
import type { ChainpressSettings } from "../core/settings.js";
import { modelOf, type SessionModel } from "../main/session-model.js";
import { CliError } from "./errors.js";
import type { FollowLinksFlag, ProtectionFlags } from "./options.js";
import { writeErr, type CliIo } from "./output.js";
import { resolveSessionPath } from "./session-path.js";

export async function loadForReading(named: string, io: CliIo, flags: FollowLinksFlag): Promise<SessionModel> {
  const { file } = resolveSessionPath(named, flags.followLinks === true);
  assertNotFolder(file);
  const model = modelOf(await readSession(file, { malformedLines: "skip" }));
  for (const warning of model.loaded.warnings) writeErr(io, `chainpress: warning: ${warning.message}`);
  for (const warning of model.reconstructWarnings) writeErr(io, `chainpress: warning: ${file}: ${formatReconstructWarning(warning)}`);
  const broken = model.branchBreak;
  if (broken) writeErr(io, `chainpress: warning: ${file}: branch stops at entry ${broken.entryId} (${broken.reason} ${broken.parentId})`);
  return model;
}

/** Render-time settings equal to what compact used with the same flags and settings files. */
export function pruneOptionsOf(
  flags: ProtectionFlags,
  settings: ChainpressSettings,
): Required<Pick<PruneOptions, "isProtected" | "recoveryGraceTurns" | "chainCompressionEnabled" | "stripFinalAssistantThinking" | "map">> {
  const isProtected = makeProtectionPredicate({
    protectedTools: flags.protectedTools ?? settings.protectedTools,
    protectedPaths: flags.protectedPaths ?? settings.protectedPaths,
  });
  const { enabled, stripFinalAssistantThinking } = settings.chainCompression;
  return { isProtected, recoveryGraceTurns: settings.recoveryGraceTurns, chainCompressionEnabled: enabled, stripFinalAssistantThinking, map: mapBudgetOf(settings.archiveMap) ?? false };
}

/** A folder given to render/query/stats: say so, instead of Node's raw EISDIR. */
function assertNotFolder(file: string): void {
  let folder = false;
  try {
    folder = fs.statSync(file).isDirectory();
  } catch {
    // A missing file is reported by the reader, with its own message.
  }
  if (folder) throw new CliError(`${file}: is a folder, not a session file (give one *.jsonl file; only compact searches folders)`);
}
