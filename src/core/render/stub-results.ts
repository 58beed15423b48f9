/**
 * Render phase 1 (reference §6.1): archived tool outputs are replaced by a stub naming the ref
 * that recovers them. Pure; input messages are never mutated, and the input array itself is
 * returned when no result needed a stub (so callers can detect "nothing changed" by identity).
 */

import { BACKFILLED_TURN_INDEX } from "../chain-entry.js";
import { detectionArgs, toolCallParts } from "../message-text.js";
import { archivedOutputStubText } from "./archived-output-stub.js";
import { occurrenceKey, resultTimestampOf } from "../occurrence-key.js";
import type { ProtectionPredicate } from "../protection.js";
import type { PruneState } from "../prune-state.js";
import type { ToolCallRecord } from "../prune-types.js";
import type { AgentMessage, ToolResultMessage } from "../session-types.js";
import { runSteps, stepDue, type Steps } from "../steps.js";

export interface StubOptions {
  /** Render-time protection re-check: a protected output stays visible even when archived. */
  isProtected: ProtectionPredicate;
  /** Occurrence keys of recent context_tree_query results (select-eligible.ts `recoveryGraceKeys`). */
  graceKeys: ReadonlySet<string>;
  /** Positions whose result is dropped later anyway (inside a compressed chain): not worth a stub. */
  dropped?: Uint8Array;
  /** Where a spill file is now (io/read-spill.ts locateSpillFile), undefined for a path refused as outside the archive; the stored path when absent. */
  spillPathOf?: (storedPath: string) => string | undefined;
  /** Occurrence keys of outputs a context edit changed: the edit's content is shown, never a stub made from the raw archive. */
  editedOutputs?: ReadonlyMap<string, unknown>;
}

/** What a spilled stub shows instead of a spill path chainpress refuses to read: never the recorded path itself. */
export const REFUSED_SPILL_PATH_TEXT = "(none: the recorded spill path is outside this session's blob folder)";

/** Stub text of an output archived inline. */
export function stubText(ref: string): string {
  return `[Summarized in pruner summary, ref \`${ref}\`. Use context_tree_query to retrieve full output.]`;
}

/** Stub text of an output spilled to a file; `—` is U+2014 as upstream writes it. */
export function spilledStubText(record: ToolCallRecord, ref: string, shownPath = record.spillPath): string {
  return [
    `[Oversized output spilled to file \u2014 ${record.spillBytes ?? "?"} bytes.]`,
    `Tool: ${record.toolName}`,
    "Preview (head):",
    record.resultPreview ?? "",
    `Full output \u2014 read this file (offset/limit supported): ${shownPath}`,
    `Or use context_tree_query with ref \`${ref}\`.`,
  ].join("\n");
}

/** The archived record behind a result and the key its ref is registered under. */
interface Archived {
  record: ToolCallRecord;
  refKey: string;
}

/**
 * Index or dedup alias first; then the legacy fallback: a record archived under the bare id is
 * used only when that id has no other occurrence, otherwise a reused id would stub a live turn.
 * A dedup alias whose original is gone resolves to nothing: stubbing it would point the model
 * at a ref it cannot recover (fail-closed).
 */
function archivedRecord(state: PruneState, key: string, toolCallId: string): Archived | undefined {
  const direct = state.recordForKey(key);
  if (direct) return { record: direct, refKey: key };
  // A legacy record is archived under the bare id itself: without one, no key list is needed.
  if (key === toolCallId || !state.records.has(toolCallId)) return undefined;
  const keys = state.keysOf(toolCallId);
  const legacy = keys.length === 1 && keys[0] === toolCallId ? state.records.get(toolCallId) : undefined;
  return legacy ? { record: legacy, refKey: toolCallId } : undefined;
}

function stubMessage(result: ToolResultMessage, text: string): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: result.toolCallId,
    toolName: result.toolName,
    content: [{ type: "text", text }],
    isError: false,
    timestamp: result.timestamp,
  };
}

/** True when the message already is exactly this stub (a re-render must not count as a change). */
function isSameStub(result: ToolResultMessage, text: string): boolean {
  const content = result.content;
  return (
    Object.keys(result).length === 6 &&
    result.isError === false &&
    Array.isArray(content) &&
    content.length === 1 &&
    content[0]?.type === "text" &&
    (content[0] as { text?: unknown }).text === text
  );
}

/** The archived record a result would be stubbed from, or undefined when it stays as it is (before the protection re-check). */
function archivedFor(result: ToolResultMessage, state: PruneState, options: StubOptions): Archived | undefined {
  const id = result.toolCallId;
  if (typeof id !== "string" || id === "") return undefined;
  const key = occurrenceKey(id, resultTimestampOf(result.timestamp));
  if (options.graceKeys.has(key) || options.editedOutputs?.has(key) === true) return undefined;
  return archivedRecord(state, key, id);
}

/** The stub text for a result archivedFor found, or undefined when it must stay as it is. */
function stubFor(result: ToolResultMessage, archived: Archived, state: PruneState, options: StubOptions, callArgs: Map<string, unknown>): string | undefined {
  // Without the call's args only the tool-name rule can match; path rules need the args.
  if (options.isProtected(archived.record.toolName, callArgs.get(result.toolCallId))) return undefined;
  const ref = state.displayRef(archived.refKey);
  const spillPath = archived.record.spillPath;
  const shownPath = spillPath && options.spillPathOf ? options.spillPathOf(spillPath) : spillPath;
  // A backfilled output was never summarised: upstream's wording would tell the model otherwise.
  if (archived.record.turnIndex === BACKFILLED_TURN_INDEX) return archivedOutputStubText(archived.record, ref, shownPath || undefined);
  if (!spillPath) return stubText(ref);
  return spilledStubText(archived.record, ref, shownPath ?? REFUSED_SPILL_PATH_TEXT);
}

/** Replace every archived, unprotected, out-of-grace tool result by its stub. */
export function stubArchivedResults(messages: AgentMessage[], state: PruneState, options: StubOptions): AgentMessage[] {
  return runSteps(stubArchivedResultsSteps(messages, state, options));
}

/** stubArchivedResultsSteps' first pass: the results that may get a stub, by position. */
function* stubCandidatesSteps(messages: AgentMessage[], state: PruneState, options: StubOptions): Steps<Map<number, Archived>> {
  const candidates = new Map<number, Archived>();
  for (let index = 0; index < messages.length; index++) {
    if (stepDue(index)) yield;
    const message = messages[index]!;
    if (message.role !== "toolResult" || options.dropped?.[index] === 1) continue;
    const archived = archivedFor(message as ToolResultMessage, state, options);
    if (archived) candidates.set(index, archived);
  }
  return candidates;
}

/**
 * stubArchivedResults, pausable (core/steps.ts). Two passes: the results that may get a stub
 * first, then the stubs, with the args of only those results' calls. Once a session's chains
 * are compressed, its archived results all lie inside them and the first pass finds none: a
 * render then never collects the args of every call.
 */
export function* stubArchivedResultsSteps(messages: AgentMessage[], state: PruneState, options: StubOptions): Steps<AgentMessage[]> {
  // Nothing archived, nothing to stub (a session's first compaction measures its context so).
  if (state.records.size === 0) return messages;
  const candidates = yield* stubCandidatesSteps(messages, state, options);
  if (candidates.size === 0) return messages;
  const wanted = new Set<string>();
  for (const index of candidates.keys()) wanted.add((messages[index] as ToolResultMessage).toolCallId);
  let out: AgentMessage[] | undefined;
  // Args of the latest call with each wanted id, so the protection re-check sees what the call asked for.
  const callArgs = new Map<string, unknown>();
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role === "assistant") for (const call of toolCallParts(message)) if (wanted.has(call.id)) callArgs.set(call.id, detectionArgs(call));
    let next = message;
    const archived = candidates.get(index);
    if (archived) {
      const result = message as ToolResultMessage;
      const text = stubFor(result, archived, state, options, callArgs);
      if (text !== undefined && !isSameStub(result, text)) next = stubMessage(result, text);
    }
    if (next !== message) out ??= messages.slice(0, index);
    out?.push(next);
    if (stepDue(index)) yield;
  }
  return out ?? messages;
}
