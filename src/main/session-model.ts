/**
 * A session as every command sees it: the file read and migrated in memory, its active branch,
 * the branch messages chain detection runs on, and the pruning state rebuilt from the branch.
 */

import path from "node:path";
import { reconstructState, type ReconstructWarning } from "../core/reconstruct.js";
import type { PruneState } from "../core/prune-state.js";
import type { AgentMessage, MessageEntry, SessionEntry } from "../core/session-types.js";
import { branchMessages, buildBranch, type BranchBreak } from "../core/session-tree.js";
import { blobDirFor } from "../core/spill-layout.js";
import { readSession, type LoadedSession } from "../io/read-session.js";

export interface SessionModel {
  loaded: LoadedSession;
  /** Active branch, root → leaf. */
  branch: SessionEntry[];
  /** Message objects of the branch (chain detection input). */
  messages: AgentMessage[];
  state: PruneState;
  /** Folder for this session's spill files. */
  blobDir: string;
  reconstructWarnings: ReconstructWarning[];
  branchBreak: BranchBreak | null;
  /** The branch entry a message object of `messages` belongs to. */
  entryOf(message: AgentMessage): SessionEntry | undefined;
}

export async function loadSessionModel(file: string): Promise<SessionModel> {
  const loaded = await readSession(file);
  return modelOf(loaded);
}

/** Build the model of an already-read session (after a migration rewrite, for instance). */
export function modelOf(loaded: LoadedSession): SessionModel {
  let branchBreak: BranchBreak | null = null;
  const branch = buildBranch(loaded.entries, (problem) => (branchBreak = problem));
  const { state, warnings } = reconstructState(branch, { lineOf: (entry) => loaded.lineOf(entry) });
  const entryByMessage = new WeakMap<object, SessionEntry>();
  for (const entry of branch) {
    const message = (entry as Partial<MessageEntry>).message;
    if (entry.type === "message" && typeof message === "object" && message !== null) entryByMessage.set(message, entry);
  }
  return {
    loaded,
    branch,
    messages: branchMessages(branch),
    entryOf: (message) => entryByMessage.get(message),
    state,
    blobDir: blobDirFor(path.dirname(path.resolve(loaded.file)), loaded.header.id),
    reconstructWarnings: warnings,
    branchBreak,
  };
}
