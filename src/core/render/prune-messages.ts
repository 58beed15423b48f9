/**
 * What the model sees (reference §6): `pruneMessages` runs on every pi `context` event and
 * turns the branch messages into the pruned context. Phases, in order:
 *   1. stub archived tool results        (stub-results.ts)
 *   3. replace compressed chain ranges   (chain-ranges.ts)
 *   4. sweep orphaned tool results       (orphan-sweep.ts)
 * Upstream's phase 2 (purging big arguments of failed calls after a cooldown) is not part of
 * chain compression and is left out on purpose; numbering follows upstream so the reference
 * reads across.
 *
 * Contract: pure, linear in the messages, never mutates an input message, returns the input
 * array itself when nothing changed, and is idempotent (a second run changes nothing).
 * Diagnostics come back as reports; persisting and deduplicating them is the caller's job.
 */

import { DEFAULT_ARCHIVE_MAP, mapBudgetOf, type MapBudget } from "../archive-map.js";
import { DEFAULT_PROTECTED_PATHS, DEFAULT_PROTECTED_TOOLS, DEFAULT_RECOVERY_GRACE_TURNS } from "../defaults.js";
import { isSyntheticChainMessage } from "../message-text.js";
import { makeProtectionPredicate, type ProtectionPredicate } from "../protection.js";
import type { PruneState } from "../prune-state.js";
import type { DiagnosticReport } from "../prune-types.js";
import { recoveryGraceKeysSteps } from "../select-eligible.js";
import type { AgentMessage } from "../session-types.js";
import { SpanIndex } from "../span-index.js";
import { runSteps, type Steps } from "../steps.js";
import { applyChainRangesSteps, plannedRangesSteps, type PlannedRanges } from "./chain-ranges.js";
import { sweepOrphansSteps } from "./orphan-sweep.js";
import { stubArchivedResultsSteps } from "./stub-results.js";

export interface PruneOptions {
  /** Protection rule re-checked at render time; defaults to upstream's default config. */
  isProtected?: ProtectionPredicate;
  /** Recent context_tree_query results stay visible this many user turns (default 3). */
  recoveryGraceTurns?: number;
  /** `chainCompression.enabled`: when false, registered chains are not rendered (default true). */
  chainCompressionEnabled?: boolean;
  /** The closing assistant of a compressed chain loses its thinking blocks (default true). */
  stripFinalAssistantThinking?: boolean;
  /** Where a spill file is now, for the stubs' "read this file" line (a moved session). */
  spillPathOf?: (storedPath: string) => string | undefined;
  /** Look for range-id-mismatch (chain-ranges.ts; default true): false when the diagnostics are not wanted. */
  checkRecordedIds?: boolean;
  /** Outputs a context edit changed (core/context-edits.ts editedOutputs): shown as edited, never stubbed from the archive. */
  editedOutputs?: ReadonlyMap<string, unknown>;
  /** The archive map's budget under each compressed chain (default: DEFAULT_ARCHIVE_MAP's); false: no map. */
  map?: MapBudget | false;
}

export interface PruneResult {
  /** The pruned context; the input array itself when `changed` is false. */
  messages: AgentMessage[];
  /** True when any message was stubbed, dropped, inserted or rewritten. */
  changed: boolean;
  /** unresolved-range, range-id-mismatch and orphan-sweep reports of this render. */
  diagnostics: DiagnosticReport[];
}

/** The default rule, compiled once (its memo of path verdicts gives the same answers whoever asks). */
const DEFAULT_PROTECTION: ProtectionPredicate = makeProtectionPredicate({ protectedTools: DEFAULT_PROTECTED_TOOLS, protectedPaths: DEFAULT_PROTECTED_PATHS });

/**
 * Grace keys counted without our own synthetic messages: they are user-role, so counting them
 * would age a recovery result on a re-render and break idempotence. Raw branch messages never
 * hold one, so for pi's own calls this is exactly upstream's rule.
 */
function graceKeysFor(messages: AgentMessage[], graceTurns: number): Steps<Set<string>> {
  return recoveryGraceKeysSteps(messages, graceTurns, isSyntheticChainMessage);
}

/**
 * Positions strictly inside the spans phase 3 will replace. Stubbing never moves a message or
 * changes a user/assistant timestamp, so the spans are the same before and after phase 1, and
 * phase 3 applies the same plan.
 */
function droppedPositions(length: number, planned: PlannedRanges): Uint8Array {
  const inside = new Uint8Array(length);
  for (const range of planned.ranges) inside.fill(1, range.startIndex + 1, range.endIndex);
  return inside;
}

export function pruneMessages(messages: AgentMessage[], state: PruneState, options: PruneOptions = {}): PruneResult {
  return runSteps(pruneMessagesSteps(messages, state, options));
}

/** pruneMessages, pausable (core/steps.ts): for a whole-session render on a thread others share. */
export function* pruneMessagesSteps(messages: AgentMessage[], state: PruneState, options: PruneOptions = {}): Steps<PruneResult> {
  const chainsOn = options.chainCompressionEnabled !== false;
  const graceKeys = yield* graceKeysFor(messages, options.recoveryGraceTurns ?? DEFAULT_RECOVERY_GRACE_TURNS);
  // One index serves phases 1 and 3: stubbing moves no message and touches no user or assistant one.
  const spans = chainsOn && state.chains.size > 0 ? yield* SpanIndex.steps(messages, state.chains.values()) : undefined;
  const planned = spans ? yield* plannedRangesSteps(spans, state) : undefined;
  const dropped = planned ? droppedPositions(messages.length, planned) : undefined;
  const stubbed = yield* stubArchivedResultsSteps(messages, state, {
    isProtected: options.isProtected ?? DEFAULT_PROTECTION,
    graceKeys,
    ...(dropped ? { dropped } : {}),
    ...(options.spillPathOf ? { spillPathOf: options.spillPathOf } : {}),
    ...(options.editedOutputs ? { editedOutputs: options.editedOutputs } : {}),
  });
  const diagnostics: DiagnosticReport[] = [];
  let current = stubbed;
  if (chainsOn) {
    const map = options.map === false ? undefined : (options.map ?? mapBudgetOf(DEFAULT_ARCHIVE_MAP));
    const chainOptions = {
      stripFinalAssistantThinking: options.stripFinalAssistantThinking !== false,
      checkRecordedIds: options.checkRecordedIds !== false,
      ...(map ? { map } : {}),
      ...(options.editedOutputs ? { editedOutputs: options.editedOutputs } : {}),
    };
    const chains = yield* applyChainRangesSteps(current, state, chainOptions, planned);
    current = chains.messages;
    diagnostics.push(...chains.diagnostics);
  }
  const swept = yield* sweepOrphansSteps(current);
  diagnostics.push(...swept.diagnostics);
  return { messages: swept.messages, changed: swept.messages !== messages, diagnostics };
}
