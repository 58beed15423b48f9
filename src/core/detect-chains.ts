/**
 * Chain detection (reference §4.1): a chain opens at a real user message, collects the tool
 * calls and results that follow, and closes at the first text-only assistant reply.
 * Pure; one pass over the branch messages.
 */

import { occurrenceKey, resultTimestampOf } from "./occurrence-key.js";
import { detectionArgs, isSyntheticChainMessage, toolCallParts } from "./message-text.js";
import type { ProtectionPredicate } from "./protection.js";
import type { ChainRange } from "./prune-types.js";
import type { AgentMessage, ToolCallPart, ToolResultMessage } from "./session-types.js";
import { runSteps, stepDue, type Steps } from "./steps.js";

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
  return runSteps(detectChainsSteps(messages, isProtected));
}

/** detectChains, pausable (core/steps.ts). */
export function* detectChainsSteps(messages: readonly AgentMessage[], isProtected = neverProtected): Steps<ChainRange[]> {
  const chains: ChainRange[] = [];
  let current: ChainBuilder | null = null;
  for (let index = 0; index < messages.length; index++) {
    if (stepDue(index)) yield;
    const message = messages[index]!;
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
      addToolCalls(current, calls, isProtected);
    } else if (message.role === "toolResult") {
      addToolResult(current, message as ToolResultMessage, isProtected);
    }
  }
  return chains;
}

/**
 * The chain still open at the end of the branch (no text-only reply yet), or undefined. Only the
 * messages after the last real user message are walked, so the cost does not grow with the
 * session. Its `finalAssistantTimestamp` is null, as for an interrupted chain.
 */
export function detectOpenChain(messages: readonly AgentMessage[], isProtected = neverProtected): OpenChain | undefined {
  let startIndex = messages.length - 1;
  while (startIndex >= 0 && !(messages[startIndex]!.role === "user" && !isSyntheticChainMessage(messages[startIndex]!))) startIndex--;
  if (startIndex < 0) return undefined;
  const chain = new ChainBuilder(messages[startIndex]!.timestamp as number);
  for (let i = startIndex + 1; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === "assistant") {
      const calls = toolCallParts(message);
      if (calls.length === 0) return undefined;
      addToolCalls(chain, calls, isProtected);
    } else if (message.role === "toolResult") {
      addToolResult(chain, message as ToolResultMessage, isProtected);
    }
  }
  return chain.middleIds.size === 0 ? undefined : { chain: chain.finish(null), startIndex };
}

/** An open chain and where its user message is in the array it was found in. */
export interface OpenChain {
  chain: ChainRange;
  startIndex: number;
}

function addToolCalls(chain: ChainBuilder, calls: readonly ToolCallPart[], isProtected: ProtectionPredicate): void {
  for (const call of calls) {
    if (!isNonEmptyString(call.id) || !isNonEmptyString(call.name)) continue;
    chain.middleIds.add(call.id);
    if (isProtected(call.name, detectionArgs(call))) chain.protectedIds.add(call.id);
  }
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
