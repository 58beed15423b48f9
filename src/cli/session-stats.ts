/**
 * What `chainpress stats` reports about a session: its chains (closed, interrupted, and the
 * one still open at the end), their size, per-batch summary coverage and compression, and the
 * context size with and without the session's current compression (images counted as billed,
 * core/billed-size.ts).
 */

import { addTally, emptyTally, imageBillOf, type ImageTally } from "../core/billed-size.js";

import { detectChains } from "../core/detect-chains.js";
import { contentText } from "../core/message-text.js";
import { occurrenceKey, resultTimestampOf } from "../core/occurrence-key.js";
import type { ProtectionPredicate } from "../core/protection.js";
import type { ChainRange } from "../core/prune-types.js";
import type { AgentMessage, ToolResultMessage } from "../core/session-types.js";
import { contextMessages } from "../core/session-tree.js";
import { tokensOf } from "../main/compact-report.js";
import { measureContext } from "../main/context-size.js";
import type { SessionModel } from "../main/session-model.js";
import { jsonText } from "../core/json-text.js";

export interface ChainStats {
  startUserTimestamp: number;
  startTime: string | null;
  status: "closed" | "interrupted" | "open";
  /** Distinct tool-call ids in the chain. */
  calls: number;
  protectedCalls: number;
  /** Characters of the chain's tool outputs as they are in the session. */
  chars: number;
  /** Whether a per-batch summary covers any of its outputs. */
  coverage: "covered" | "uncovered";
  /** Block id when the chain is compressed. */
  compressed: string | null;
}

export interface SizeStats {
  messages: number;
  chars: number;
  tokens: number;
  /** Image parts in the context, and by which rule each was counted ("pixels" or "pi-estimate"). */
  images: ImageTally;
}

export interface SessionStats {
  file: string;
  sessionId: string;
  /** Version of the file on disk (chainpress migrates 1/2 in memory). */
  fileVersion: number;
  chains: { total: number; closed: number; interrupted: number; open: number; compressed: number };
  list: ChainStats[];
  /** Without any compression vs with the session's current compression. */
  context: { before: SizeStats; after: SizeStats };
}

export function sessionStats(model: SessionModel, render: { isProtected: ProtectionPredicate; recoveryGraceTurns: number }): SessionStats {
  const chars = outputChars(model.messages);
  const list = chainsWithOpen(model.messages, render.isProtected).map((chain) => chainStats(model, chain, chars));
  const count = (status: ChainStats["status"]): number => list.filter((c) => c.status === status).length;
  const after = measureContext(model, render);
  return {
    file: model.loaded.file,
    sessionId: model.loaded.header.id,
    fileVersion: model.loaded.originalVersion,
    chains: { total: list.length, closed: count("closed"), interrupted: count("interrupted"), open: count("open"), compressed: list.filter((c) => c.compressed).length },
    list,
    context: { before: sizeOf(contextMessages(model.branch, model.edits)), after: { messages: after.messages, chars: after.chars, tokens: tokensOf(after.chars), images: after.images } },
  };
}

/** NaN marks the sentinel's close: detectChains never emits a chain still open at the end. */
const OPEN = Number.NaN;

/**
 * Detection with a text-only sentinel reply appended: it closes the trailing open chain (if
 * any) so it is reported too; a sentinel after an already closed chain changes nothing.
 */
function chainsWithOpen(messages: readonly AgentMessage[], isProtected: ProtectionPredicate): ChainRange[] {
  const sentinel: AgentMessage = { role: "assistant", content: [], timestamp: OPEN };
  return detectChains([...messages, sentinel], isProtected);
}

/** Output length of every tool result, by occurrence key. */
function outputChars(messages: readonly AgentMessage[]): Map<string, number> {
  const chars = new Map<string, number>();
  for (const message of messages) {
    if (message.role !== "toolResult") continue;
    const result = message as ToolResultMessage;
    chars.set(occurrenceKey(result.toolCallId, resultTimestampOf(result.timestamp)), contentText(result.content).length);
  }
  return chars;
}

function chainStats(model: SessionModel, chain: ChainRange, chars: Map<string, number>): ChainStats {
  const final = chain.finalAssistantTimestamp;
  const start = chain.startUserTimestamp;
  return {
    startUserTimestamp: start,
    startTime: Number.isFinite(start) ? new Date(start).toISOString() : null,
    status: final === null ? "interrupted" : Number.isNaN(final) ? "open" : "closed",
    calls: chain.middleToolCallIds.length,
    protectedCalls: chain.protectedToolCallIds.length,
    chars: chain.middleOccurrenceKeys.reduce((sum, key) => sum + (chars.get(key) ?? 0), 0),
    coverage: model.state.hasSummaryCovering(chain.middleOccurrenceKeys) ? "covered" : "uncovered",
    compressed: model.state.chains.get(start)?.blockId ?? null,
  };
}

/** Same measure as measureContext: JSON characters, message by message, images as billed. */
function sizeOf(messages: readonly AgentMessage[]): SizeStats {
  let chars = 0;
  const images = emptyTally();
  for (const message of messages) {
    const bill = imageBillOf(message);
    chars += jsonText(message).length + bill.delta;
    addTally(images, bill.tally);
  }
  return { messages: messages.length, chars, tokens: tokensOf(chars), images };
}
