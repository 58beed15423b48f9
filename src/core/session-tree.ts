/**
 * The active branch of a session tree and the messages on it.
 * Pure functions over entries already in memory. The leaf is the last entry in file order
 * (as pi picks it on load); the branch is the parentId walk from there to the root.
 * Message objects of `message` entries are returned as-is (same identity, never cloned), so
 * callers can map results back to entries.
 */
import type {
  AgentMessage,
  BranchSummaryEntry,
  CompactionEntry,
  CustomMessageEntry,
  MessageEntry,
  SessionEntry,
} from "./session-types.js";
import { editedMessage, NO_EDITS, type ContextEdits } from "./context-edits.js";
import { isObject } from "./entry-shapes.js";
import { runSteps, stepDue, type Steps } from "./steps.js";

/** Why a parentId walk stopped before reaching a root (an entry whose parentId is null). */
export interface BranchBreak {
  /** "cycle": the parent is already on the branch; "missing-parent": no entry has that id. */
  reason: "cycle" | "missing-parent";
  /** Id of the entry whose parent could not be followed. */
  entryId: string;
  /** The parentId that could not be followed. */
  parentId: string;
}

/** Result of walking a branch. */
export interface BranchWalk {
  /** Entries from the (reached) root to the leaf. */
  entries: SessionEntry[];
  /** Where each of `entries` is in the array walked. */
  indices: number[];
  /** Set when the walk stopped early; `entries` then starts at the last reachable entry. */
  broken: BranchBreak | null;
}

/**
 * Walks from `leafId` (default: the last entry in file order) to the root.
 * Stray `session` lines are ignored and duplicate ids resolve to the last entry, as in pi.
 * `uniqueIds`: the caller knows no two entries share an id (io/session-builder checks it).
 */
export function walkBranch(entries: readonly SessionEntry[], leafId?: string, uniqueIds = false): BranchWalk {
  return runSteps(walkBranchSteps(entries, leafId, uniqueIds));
}

/**
 * walkBranch, pausable (core/steps.ts). An entry's parent is nearly always the entry just before
 * it, and otherwise a few entries before (the start of an abandoned branch): with unique ids those
 * are looked at first, and the id map is built only for a parent that is further away (the map
 * and the path set held up the main thread on the way from the scan to the first chain task).
 */
export function* walkBranchSteps(entries: readonly SessionEntry[], leafId?: string, uniqueIds = false): Steps<BranchWalk> {
  let byId: Map<string, number> | undefined;
  function* indexOf(id: string): Steps<number> {
    byId ??= yield* lastIndexByIdSteps(entries);
    return byId.get(id) ?? NONE;
  }
  let current = leafId === undefined ? lastEntryIndex(entries) : yield* indexOf(leafId);
  const path: number[] = [];
  const onPath = new Uint8Array(entries.length);
  while (current !== NONE) {
    if (stepDue(path.length)) yield;
    path.push(current);
    onPath[current] = 1;
    const { id, parentId } = entries[current]!;
    if (parentId === null) return walkOf(entries, path, null);
    const near = uniqueIds ? nearbyIndexOf(entries, current, parentId) : NONE;
    const parent = near !== NONE ? near : yield* indexOf(parentId);
    if (parent === NONE || onPath[parent] === 1) {
      // pi's own walk would loop forever on a cycle; we stop and say why.
      return walkOf(entries, path, { reason: parent === NONE ? "missing-parent" : "cycle", entryId: id, parentId });
    }
    current = parent;
  }
  return walkOf(entries, path, null);
}

const NONE = -1;
/** Entries looked at before `index` for its parent before the id map is built. */
const NEARBY_ENTRIES = 4096;

/** The index of the entry with id `id` among the NEARBY_ENTRIES before `index` (stray headers skipped), or NONE. */
function nearbyIndexOf(entries: readonly SessionEntry[], index: number, id: string): number {
  for (let at = index - 1; at >= 0 && at >= index - NEARBY_ENTRIES; at--) {
    const entry = entries[at]!;
    if (entry.id === id && entry.type !== "session") return at;
  }
  return NONE;
}

/** The index of the last entry with each id (pi's rule for duplicates), stray headers left out. */
function* lastIndexByIdSteps(entries: readonly SessionEntry[]): Steps<Map<string, number>> {
  const byId = new Map<string, number>();
  for (let index = 0; index < entries.length; index++) {
    if (stepDue(index)) yield;
    const entry = entries[index]!;
    if (entry.type !== "session") byId.set(entry.id, index);
  }
  return byId;
}

/** The index of the last entry that is not a stray header, or NONE. */
function lastEntryIndex(entries: readonly SessionEntry[]): number {
  for (let at = entries.length - 1; at >= 0; at--) if (entries[at]!.type !== "session") return at;
  return NONE;
}

function walkOf(entries: readonly SessionEntry[], path: number[], broken: BranchBreak | null): BranchWalk {
  const indices = path.reverse();
  return { entries: indices.map((index) => entries[index]!), indices, broken };
}

/** Entries root→leaf of the active branch; `onBreak` hears why a walk stopped early. */
export function buildBranch(
  entries: readonly SessionEntry[],
  onBreak?: (problem: BranchBreak) => void,
): SessionEntry[] {
  const walk = walkBranch(entries);
  if (walk.broken !== null) onBreak?.(walk.broken);
  return walk.entries;
}

/**
 * The `message` objects of `message` entries, in branch order, as pi 1.6's context edits leave
 * them (input of chain detection): an omitted message is left out, an edited one is a new object.
 */
export function branchMessages(branch: readonly SessionEntry[], edits: ContextEdits = NO_EDITS): AgentMessage[] {
  return runSteps(branchMessagesSteps(branch, undefined, edits));
}

/** branchMessages, pausable (core/steps.ts); `positions`, when given (as long as the branch), gets each message's index in the branch (item i goes with message i). */
export function* branchMessagesSteps(branch: readonly SessionEntry[], positions?: Int32Array, edits: ContextEdits = NO_EDITS): Steps<AgentMessage[]> {
  const messages = new MessageList(branch.length, positions);
  for (let index = 0; index < branch.length; index++) {
    if (stepDue(index)) yield;
    const entry = branch[index]!;
    if (!isMessageEntry(entry)) continue;
    const message = edits.size === 0 ? entry.message : editedMessage(entry.message, edits.get(entry.id));
    if (message !== undefined) messages.add(message, index);
  }
  return messages.done();
}

/**
 * Messages gathered in an array made as long as the most there can be, then cut to length: grown
 * by push through a large session, a list leaves each smaller copy of itself in the old
 * generation, and a context's size is computed at the end of a compaction, when the heap is at
 * its peak. `slots`, when given, gets each message's slot (item i goes with message i).
 */
class MessageList {
  private readonly items: AgentMessage[];
  private count = 0;

  constructor(
    capacity: number,
    private readonly slots?: Int32Array,
  ) {
    this.items = new Array<AgentMessage>(capacity);
  }

  add(message: AgentMessage, slot: number): void {
    if (this.slots) this.slots[this.count] = slot;
    this.items[this.count++] = message;
  }

  done(): AgentMessage[] {
    this.items.length = this.count;
    return this.items;
  }
}

/**
 * A `message` entry whose `message` is an object with a string role. Anything else cannot be a
 * conversation message (pi would crash on it); it is left out rather than crashing the reader.
 */
function isMessageEntry(entry: SessionEntry): entry is MessageEntry {
  if (entry.type !== "message") return false;
  const message = (entry as { message?: unknown }).message;
  return typeof message === "object" && message !== null && typeof (message as { role?: unknown }).role === "string";
}

/**
 * What pi's buildSessionContext sends to the model for this branch: with a compaction, its
 * checkpoint (pi 1.6's system message, when it has one) and summary first, then the non-system
 * entries from firstKeptEntryId up to the compaction (none when it names the compaction itself,
 * pi 1.6's retain-none), then later ones; context edits applied.
 */
export function contextMessages(branch: readonly SessionEntry[], edits: ContextEdits = NO_EDITS): AgentMessage[] {
  return runSteps(contextMessagesSteps(branch, undefined, edits));
}

/** A context message made from an entry (a summary, a custom message), not a branch entry's own message. */
export const DERIVED_MESSAGE = -1;

/**
 * contextMessages, pausable (core/steps.ts). `slots`, when given (two longer than the branch),
 * gets the branch index of each message that is a branch entry's own message object, and
 * DERIVED_MESSAGE for any other (item i goes with message i).
 */
export function* contextMessagesSteps(branch: readonly SessionEntry[], slots?: Int32Array, edits: ContextEdits = NO_EDITS): Steps<AgentMessage[]> {
  let compactionIndex = -1;
  for (let i = 0; i < branch.length; i++) if (branch[i]!.type === "compaction") compactionIndex = i;
  yield;
  const messages = new ContextList(new MessageList(branch.length + 2, slots), edits);
  if (compactionIndex === -1) {
    for (let i = 0; i < branch.length; i++) {
      if (stepDue(i)) yield;
      messages.addEntry(branch, i);
    }
    return messages.done();
  }
  const compaction = branch[compactionIndex] as CompactionEntry;
  messages.addCheckpoint(compaction);
  // Kept entries start at firstKeptEntryId; an id not on the branch keeps nothing (as pi).
  const firstKept = branch.findIndex((e, i) => i < compactionIndex && e.id === compaction.firstKeptEntryId);
  if (firstKept !== -1) {
    // The checkpoint stands for the prompt: kept system messages are not replayed.
    for (let i = firstKept; i < compactionIndex; i++) if (!isSystemMessageEntry(branch[i]!)) messages.addEntry(branch, i);
  }
  for (let i = compactionIndex + 1; i < branch.length; i++) {
    if (stepDue(i)) yield;
    messages.addEntry(branch, i);
  }
  return messages.done();
}

function isSystemMessageEntry(entry: SessionEntry): boolean {
  return isMessageEntry(entry) && entry.message.role === "system";
}

/** A MessageList that applies the branch's context edits to each entry's contribution. */
class ContextList {
  constructor(
    private readonly list: MessageList,
    private readonly edits: ContextEdits,
  ) {}

  /** The compaction's system message (pi 1.6) and summary, each as the compaction's edit leaves it (an omission omits both). */
  addCheckpoint(compaction: CompactionEntry): void {
    const replacement = this.edits.get(compaction.id);
    if (replacement === null) return;
    if (isObjectWithRole(compaction.systemMessage)) this.list.add(editedMessage(compaction.systemMessage, replacement)!, DERIVED_MESSAGE);
    const summary = { role: "compactionSummary", summary: compaction.summary, tokensBefore: compaction.tokensBefore, timestamp: msOf(compaction.timestamp) };
    this.list.add(summary as AgentMessage, DERIVED_MESSAGE);
  }

  /** Adds the model-visible message of `branch[index]`, if it has one, with its slot (see contextMessagesSteps). */
  addEntry(branch: readonly SessionEntry[], index: number): void {
    const entry = branch[index]!;
    const derived = derivedMessage(entry);
    const own = derived === undefined && isMessageEntry(entry) ? entry.message : undefined;
    const message = own ?? derived;
    if (message === undefined) return;
    const shown = this.edits.size === 0 ? message : editedMessage(message, this.edits.get(entry.id));
    if (shown !== undefined) this.list.add(shown, shown === own ? index : DERIVED_MESSAGE);
  }

  done(): AgentMessage[] {
    return this.list.done();
  }
}

/** The message pi makes of a custom message or branch summary entry; undefined for any other. */
function derivedMessage(entry: SessionEntry): AgentMessage | undefined {
  if (entry.type === "custom_message") {
    const e = entry as CustomMessageEntry;
    return { role: "custom", customType: e.customType, content: e.content, display: e.display, details: e.details, timestamp: msOf(e.timestamp) } as AgentMessage;
  }
  if (entry.type === "branch_summary" && (entry as BranchSummaryEntry).summary) {
    const e = entry as BranchSummaryEntry;
    return { role: "branchSummary", summary: e.summary, fromId: e.fromId, timestamp: msOf(e.timestamp) };
  }
  return undefined;
}

function isObjectWithRole(value: unknown): value is AgentMessage {
  return isObject(value) && typeof value.role === "string";
}

/** ISO timestamp → epoch ms, as pi converts entry timestamps for derived messages. */
function msOf(timestamp: string): number {
  return new Date(timestamp).getTime();
}
