/**
 * Chain detection (reference §4.1): a chain opens at a real user message, collects the tool
 * calls and results that follow, and closes at the first text-only assistant reply.
 * Pure; one pass over the branch messages.
 */

import { occurrenceKey, resultTimestampOf } from "./occurrence-key.js";
import { detectionArgs, isSyntheticChainMessage, toolCallParts } from "./message-text.js";
import type { ProtectionPredicate } from "./protection.js";
import type { ChainRange } from "./prune-types.js";
import type { AgentMessage, ToolResultMessage } from "./session-types.js";

class ChainBuilder {
  readonly middleIds = new Set<string>();
  readonly middleKeys = new Set<string>();
  readonly protectedIds = new Set<string>();
  constructor(readonly startUserTimestamp: number) {}

  finish(finalAssistantTimestamp: number | null): ChainRange {
    return {
      startUserTimestamp: this.startUserTimestamp,
      middleToolCallIds: [...this.middleIds],
      middleOccurrenceKeys: [...this.middleKeys],
      protectedToolCallIds: [...this.protectedIds],
      finalAssistantTimestamp,
    };
  }
}

const neverProtected: ProtectionPredicate = () => false;

/** Ids and names from a file are untrusted: only non-empty strings can be keyed and archived. */
function isNonEmptyString(value: unknown): value is string {
  return typeof value === "string" && value !== "";
}

/** Closed and interrupted chains in message order; a chain still open at the end is not emitted. */
export function detectChains(messages: readonly AgentMessage[], isProtected = neverProtected): ChainRange[] {
  const chains: ChainRange[] = [];
  let current: ChainBuilder | null = null;
  for (const message of messages) {
    if (message.role === "user") {
      if (isSyntheticChainMessage(message)) continue;
      if (current) chains.push(current.finish(null));
      current = new ChainBuilder(message.timestamp as number);
      continue;
    }
    if (!current) continue;
    if (message.role === "assistant") {
      const calls = toolCallParts(message);
      if (calls.length === 0) {
        chains.push(current.finish(message.timestamp as number));
        current = null;
        continue;
      }
      for (const call of calls) {
        if (!isNonEmptyString(call.id) || !isNonEmptyString(call.name)) continue;
        current.middleIds.add(call.id);
        if (isProtected(call.name, detectionArgs(call))) current.protectedIds.add(call.id);
      }
    } else if (message.role === "toolResult") {
      addToolResult(current, message as ToolResultMessage, isProtected);
    }
  }
  return chains;
}

function addToolResult(chain: ChainBuilder, result: ToolResultMessage, isProtected: ProtectionPredicate): void {
  const id = result.toolCallId;
  if (!isNonEmptyString(id)) return;
  chain.middleIds.add(id);
  chain.middleKeys.add(occurrenceKey(id, resultTimestampOf(result.timestamp)));
  if (isProtected(result.toolName, undefined)) chain.protectedIds.add(id);
}

/**
 * The detection array for a live flush: the branch plus the just-closed assistant message, which
 * pi has not persisted yet when message_end fires. Not appended twice (same role and timestamp).
 */
export function withClosingMessage(messages: AgentMessage[], closing: AgentMessage | undefined): AgentMessage[] {
  if (!closing) return messages;
  const last = messages[messages.length - 1];
  if (last && last.role === closing.role && last.timestamp === closing.timestamp) return messages;
  return [...messages, closing];
}
