/**
 * A session as every command sees it: the file read and migrated in memory, its active branch,
 * the branch messages chain detection runs on, and the pruning state rebuilt from the branch.
 */

import path from "node:path";
import { editedOutputs, editsOnBranchSteps, type ContextEdits, type EditedOutput } from "../core/context-edits.js";
import { reconstructStateSteps, type ReconstructWarning } from "../core/reconstruct.js";
import { runSteps, stepDue, type Steps } from "../core/steps.js";
import { driveSteps } from "./cooperative.js";
import type { PruneState } from "../core/prune-state.js";
import type { AgentMessage, MessageEntry, SessionEntry } from "../core/session-types.js";
import { branchMessagesSteps, walkBranchSteps, type BranchBreak } from "../core/session-tree.js";
import { blobDirFor } from "../core/spill-layout.js";
import { readSession, type LoadedSession } from "../io/read-session.js";
import type { EntryLocation } from "../io/loaded-session.js";

export interface SessionModel {
  loaded: LoadedSession;
  /** Active branch, root → leaf. */
  branch: SessionEntry[];
  /** Message objects of the branch as pi 1.6's context edits leave them (chain detection input). */
  messages: AgentMessage[];
  /** The branch's context edits (empty for sessions pi 1.6 never edited). */
  edits: ContextEdits;
  /** Archived-output occurrence keys whose tool result an edit changed or omitted, and what the model may see of them. */
  editedOutputs: ReadonlyMap<string, EditedOutput>;
  state: PruneState;
  /** Folder for this session's spill files. */
  blobDir: string;
  reconstructWarnings: ReconstructWarning[];
  branchBreak: BranchBreak | null;
  /** The branch entry a message object of `messages` belongs to. */
  entryOf(message: AgentMessage): SessionEntry | undefined;
  /** Where the line of a message of the branch lies in the file as read. */
  locationOf(message: AgentMessage): EntryLocation | undefined;
  /** The JSON length the shard scan found for a message of the branch (io/loaded-session.ts `EntryLocation`); undefined when it did not. */
  scannedCharsOf(message: AgentMessage): number | undefined;
  /** The same for the message of `branch[slot]`, by index (no lookup). */
  scannedCharsAt(slot: number): number | undefined;
  /** The entry of `messages[k]`, by index (no lookup). */
  messageEntry(k: number): SessionEntry;
  /** Where the line of `messages[k]` lies, by index (no lookup where the scan's locations are known by index). */
  messageLocation(k: number): EntryLocation | undefined;
}

export async function loadSessionModel(file: string): Promise<SessionModel> {
  const loaded = await readSession(file);
  return modelOf(loaded);
}

/** Build the model of an already-read session (after a migration rewrite, for instance). */
export function modelOf(loaded: LoadedSession): SessionModel {
  return runSteps(modelSteps(loaded));
}

/** modelOf in slices, handing the event loop a turn every few milliseconds. */
export function modelOfCooperatively(loaded: LoadedSession): Promise<SessionModel> {
  return driveSteps(modelSteps(loaded));
}

/** A message the scan did not measure. */
const NOT_SCANNED = -1;

/**
 * Message object → its index in the branch, the map made on the first lookup: a measure and a
 * file slice go by index, and a map of every message, made up front, costs its size again in the
 * tables it outgrows, left in the old generation. A Map, not a WeakMap: a
 * weak table this size is processed again in every full collection's pause.
 */
function slotLookup(branch: readonly SessionEntry[]): (message: AgentMessage) => number | undefined {
  let slotOf: Map<object, number> | undefined;
  return (message) => {
    if (slotOf === undefined) {
      slotOf = new Map();
      for (let index = 0; index < branch.length; index++) {
        const own = (branch[index] as Partial<MessageEntry>).message;
        if (branch[index]!.type === "message" && typeof own === "object" && own !== null) slotOf.set(own, index);
      }
    }
    return slotOf.get(message);
  };
}

function* modelSteps(loaded: LoadedSession): Steps<SessionModel> {
  const walk = yield* walkBranchSteps(loaded.entries, undefined, loaded.uniqueIds === true);
  const branch = walk.entries;
  const edits = yield* editsOnBranchSteps(branch);
  const { state, warnings } = yield* reconstructStateSteps(branch, { lineOf: (entry) => loaded.lineOf(entry) });
  const scannedChars = new Float64Array(branch.length).fill(NOT_SCANNED);
  const byIndex = loaded.locationsByIndex;
  for (let index = 0; index < branch.length; index++) {
    if (stepDue(index)) yield;
    const entry = branch[index]!;
    const message = (entry as Partial<MessageEntry>).message;
    if (entry.type !== "message" || typeof message !== "object" || message === null) continue;
    const chars = byIndex ? byIndex.messageChars(walk.indices[index]!) : loaded.messageCharsOf(entry);
    scannedChars[index] = chars ?? NOT_SCANNED;
  }
  const slotOfMessage = slotLookup(branch);
  const scannedCharsAt = (slot: number) => {
    const chars = slot < 0 || slot >= scannedChars.length ? NOT_SCANNED : scannedChars[slot]!;
    return chars === NOT_SCANNED ? undefined : chars;
  };
  // The branch index of messages[k] (an array of numbers, and the copies it left growing, cost
  // more than a typed array as long as the branch).
  const positions = new Int32Array(branch.length);
  const messages = yield* branchMessagesSteps(branch, positions, edits);
  const locationAt = (slot: number) => (byIndex ? byIndex.location(walk.indices[slot]!) : loaded.locationOf(branch[slot]!));
  return {
    loaded,
    branch,
    messages,
    edits,
    editedOutputs: editedOutputs(branch, edits),
    entryOf: (message) => {
      const slot = slotOfMessage(message);
      return slot === undefined ? undefined : branch[slot];
    },
    scannedCharsOf: (message) => {
      const slot = slotOfMessage(message);
      return slot === undefined ? undefined : scannedCharsAt(slot);
    },
    scannedCharsAt,
    locationOf: (message) => {
      const slot = slotOfMessage(message);
      return slot === undefined ? undefined : locationAt(slot);
    },
    messageEntry: (k) => branch[positions[k]!]!,
    messageLocation: (k) => locationAt(positions[k]!),
    state,
    blobDir: blobDirFor(path.dirname(path.resolve(loaded.file)), loaded.header.id),
    reconstructWarnings: warnings,
    branchBreak: walk.broken,
  };
}
