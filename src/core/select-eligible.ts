/**
 * Eligibility (reference §4.2): which closed chains to compress now. The newest `rollingWindow`
 * candidates stay untouched; `/pruner compact` uses a window of 0. Chains that hold a recent
 * context_tree_query result are deferred so the model can read what it just recovered.
 */

import { QUERY_TOOL_NAME } from "./custom-types.js";
import { occurrenceKey, parseOccurrenceKey, resultTimestampOf } from "./occurrence-key.js";
import type { ChainRange } from "./prune-types.js";
import type { AgentMessage, ToolResultMessage } from "./session-types.js";
import { runSteps, stepDue, type Steps } from "./steps.js";

/** Closed chains with at least one middle call that are not yet compressed, in input order. */
export function compressionCandidates(chains: readonly ChainRange[], isCompressed: (start: number) => boolean): ChainRange[] {
  return chains.filter(
    (chain) =>
      chain.finalAssistantTimestamp !== null &&
      chain.middleToolCallIds.length > 0 &&
      !isCompressed(chain.startUserTimestamp),
  );
}

/** All but the newest `rollingWindow` candidates, minus chains in recovery grace (window counted first). */
export function selectEligible(
  chains: readonly ChainRange[],
  rollingWindow: number,
  isCompressed: (start: number) => boolean,
  graceKeys: ReadonlySet<string> = new Set(),
): ChainRange[] {
  const candidates = compressionCandidates(chains, isCompressed);
  // Upstream's exact expression: a NaN or infinite window selects nothing (fail-safe), a
  // fractional one is truncated by slice().
  const older = candidates.slice(0, Math.max(0, candidates.length - rollingWindow));
  if (graceKeys.size === 0) return older;
  return older.filter((chain) => !inGrace(chain, graceKeys));
}

function inGrace(chain: ChainRange, graceKeys: ReadonlySet<string>): boolean {
  const keys = chain.middleOccurrenceKeys.length > 0 ? chain.middleOccurrenceKeys : chain.middleToolCallIds;
  for (const key of keys) {
    if (graceKeys.has(key)) return true;
    // A grace entry without a timestamp matches any occurrence of that bare id.
    if (graceKeys.has(parseOccurrenceKey(key).toolCallId)) return true;
  }
  return false;
}

/**
 * Occurrence keys of context_tree_query results no older than `graceTurns` user messages.
 * Age = user messages in the array minus user messages at or before the result.
 */
export function recoveryGraceKeys(messages: readonly AgentMessage[], graceTurns: number, skip?: (message: AgentMessage) => boolean): Set<string> {
  return runSteps(recoveryGraceKeysSteps(messages, graceTurns, skip));
}

/** recoveryGraceKeys, pausable (core/steps.ts); messages for which `skip` holds are left out of the count. */
export function* recoveryGraceKeysSteps(messages: readonly AgentMessage[], graceTurns: number, skip?: (message: AgentMessage) => boolean): Steps<Set<string>> {
  const keys = new Set<string>();
  if (!(graceTurns > 0)) return keys;
  // Query results and the number of user messages up to each: one pass, then ages from the total.
  const results: Array<{ result: ToolResultMessage; usersBefore: number }> = [];
  let users = 0;
  for (let index = 0; index < messages.length; index++) {
    if (stepDue(index)) yield;
    const message = messages[index]!;
    if (skip?.(message)) continue;
    if (message.role === "user") users++;
    if (message.role !== "toolResult") continue;
    const result = message as ToolResultMessage;
    if (result.toolName === QUERY_TOOL_NAME && result.toolCallId) results.push({ result, usersBefore: users });
  }
  for (const { result, usersBefore } of results) {
    if (users - usersBefore <= graceTurns) keys.add(occurrenceKey(result.toolCallId, resultTimestampOf(result.timestamp)));
  }
  return keys;
}
