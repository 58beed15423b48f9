/**
 * Reads a session file into what the replay engine needs (core/replay/replay.ts): its active
 * branch, prepared once; the CLI and tests share it. Malformed lines are left out as pi's loader
 * does (real sessions hold lines where two entries were glued together).
 */

import { prepareReplay, type ReplaySession } from "../core/replay/replay.js";
import { walkBranch } from "../core/session-tree.js";
import { readSession } from "../io/read-session.js";

export interface LoadedReplay extends ReplaySession {
  file: string;
  /** Set when the branch walk stopped early (a cycle or a missing parent): the replay covers the reachable part. */
  branchBroken: string | null;
}

export async function loadReplaySession(file: string): Promise<LoadedReplay> {
  const loaded = await readSession(file, { malformedLines: "skip" });
  const walk = walkBranch(loaded.entries);
  const broken = walk.broken === null ? null : `${walk.broken.reason} at entry ${walk.broken.entryId} (parent ${walk.broken.parentId})`;
  return { file, branchBroken: broken, ...prepareReplay(walk.entries) };
}
