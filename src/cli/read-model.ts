/**
 * Loading a session for the read-only commands (render, query, stats). Malformed lines are
 * skipped with a warning, as pi's own loader skips them: these commands show what pi and the
 * model see, and must work on exactly the sessions pi opens. Nothing is written.
 */

import { makeProtectionPredicate } from "../core/protection.js";
import type { PruneOptions } from "../core/render/prune-messages.js";
import { formatReconstructWarning } from "../core/reconstruct.js";
import { readSession } from "../io/read-session.js";
import { DEFAULT_COMPACT_OPTIONS } from "../main/compact-options.js";
import { modelOf, type SessionModel } from "../main/session-model.js";
import type { ProtectionFlags } from "./options.js";
import { writeErr, type CliIo } from "./output.js";

export async function loadForReading(file: string, io: CliIo): Promise<SessionModel> {
  const model = modelOf(await readSession(file, { malformedLines: "skip" }));
  for (const warning of model.loaded.warnings) writeErr(io, `chainpress: warning: ${warning.message}`);
  for (const warning of model.reconstructWarnings) writeErr(io, `chainpress: warning: ${file}: ${formatReconstructWarning(warning)}`);
  const broken = model.branchBreak;
  if (broken) writeErr(io, `chainpress: warning: ${file}: branch stops at entry ${broken.entryId} (${broken.reason} ${broken.parentId})`);
  return model;
}

/** Render-time settings equal to what compact used with the same flags (defaults otherwise). */
export function pruneOptionsOf(flags: ProtectionFlags): Required<Pick<PruneOptions, "isProtected" | "recoveryGraceTurns">> {
  const isProtected = makeProtectionPredicate({
    protectedTools: flags.protectedTools ?? DEFAULT_COMPACT_OPTIONS.protectedTools,
    protectedPaths: flags.protectedPaths ?? DEFAULT_COMPACT_OPTIONS.protectedPaths,
  });
  return { isProtected, recoveryGraceTurns: DEFAULT_COMPACT_OPTIONS.recoveryGraceTurns };
}
