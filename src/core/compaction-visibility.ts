/**
 * Which chains pi's context no longer shows in full. pi builds the model's context from its
 * latest `compaction` entry: the summary, then the entries from `firstKeptEntryId` on (see
 * session-tree.ts contextMessages). A chain wholly before that point is *hidden*: compressing it
 * saves no context and only grows the file. A chain that starts before it and ends after it is
 * *cut*: its opening user message is gone, so its compressed form could not even render.
 * Pure: the caller decides what to do with the answer (compaction skips both by default).
 */

import type { ChainRange } from "./prune-types.js";
import type { CompactionEntry, SessionEntry } from "./session-types.js";

export interface CompactionVisibility {
  /** Start timestamps of chains wholly behind the latest compaction. */
  hidden: number[];
  /** Start timestamps of chains the compaction boundary cuts through. */
  cut: number[];
}

interface BranchMessage {
  role: unknown;
  timestamp: unknown;
  /** Whether pi's context holds this message. */
  visible: boolean;
}

/** Branch index of the first entry pi's context keeps; 0 without a compaction. */
function firstVisibleEntry(branch: readonly SessionEntry[]): number {
  let latest = -1;
  branch.forEach((entry, i) => {
    if (entry.type === "compaction") latest = i;
  });
  if (latest === -1) return 0;
  const keptId = (branch[latest] as CompactionEntry).firstKeptEntryId;
  // As pi: a firstKeptEntryId that is not on the branch before the compaction keeps nothing.
  const kept = branch.findIndex((entry, i) => i < latest && entry.id === keptId);
  return kept === -1 ? latest + 1 : kept;
}

/** The branch's conversation messages in order (what chain detection ran on), with their visibility. */
function branchMessages(branch: readonly SessionEntry[]): BranchMessage[] {
  const from = firstVisibleEntry(branch);
  const messages: BranchMessage[] = [];
  branch.forEach((entry, i) => {
    const message = entry.type === "message" ? (entry as { message?: unknown }).message : undefined;
    if (typeof message !== "object" || message === null) return;
    const { role, timestamp } = message as { role?: unknown; timestamp?: unknown };
    if (typeof role === "string") messages.push({ role, timestamp, visible: i >= from });
  });
  return messages;
}

/** Positions of a chain's opening user message and its closing assistant (the opening one when interrupted). */
function chainSpan(messages: readonly BranchMessage[], chain: ChainRange): { start: number; end: number } | undefined {
  const start = messages.findIndex((m) => m.role === "user" && m.timestamp === chain.startUserTimestamp);
  if (start === -1) return undefined;
  if (chain.finalAssistantTimestamp === null) return { start, end: start };
  for (let i = start + 1; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === "assistant" && m.timestamp === chain.finalAssistantTimestamp) return { start, end: i };
  }
  return { start, end: start };
}

export function compactionVisibility(branch: readonly SessionEntry[], chains: readonly ChainRange[]): CompactionVisibility {
  const result: CompactionVisibility = { hidden: [], cut: [] };
  if (!branch.some((entry) => entry.type === "compaction")) return result;
  const messages = branchMessages(branch);
  for (const chain of chains) {
    const span = chainSpan(messages, chain);
    // A chain not found on the branch is left to the compressor, which reports it as it does today.
    if (span === undefined) continue;
    if (!messages[span.end]!.visible) result.hidden.push(chain.startUserTimestamp);
    else if (!messages[span.start]!.visible) result.cut.push(chain.startUserTimestamp);
  }
  return result;
}

/**
 * The chains compaction may work on: without `includeCompacted`, neither hidden nor cut ones;
 * with it, the hidden ones too (whole chains compress and render normally once pi shows them
 * again, e.g. on another branch). Cut chains are never safe: their opening message is gone.
 */
export function chainsToCompact(chains: readonly ChainRange[], visibility: CompactionVisibility, includeCompacted: boolean): ChainRange[] {
  const left = new Set(visibility.cut);
  if (!includeCompacted) for (const start of visibility.hidden) left.add(start);
  return left.size === 0 ? [...chains] : chains.filter((chain) => !left.has(chain.startUserTimestamp));
}
