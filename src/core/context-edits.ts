/**
 * pi 1.6's `context_edit` entries, applied as pi's projection applies them: an edit changes what
 * one earlier entry contributes to the model's context, never the entry itself. On the active
 * branch the latest edit of a target wins (edits on other branches do not count); `null` omits
 * the target's messages; `{content}` replaces the content of a user, assistant, tool-result or
 * custom message only, a string for an assistant or tool result becoming one text block.
 * Pure functions over entries already in memory.
 */

import { contentText } from "./message-text.js";
import { occurrenceKey, resultTimestampOf } from "./occurrence-key.js";
import type { AgentMessage, ContentPart, ContextEditEntry, SessionEntry } from "./session-types.js";
import type { ToolCallRecord } from "./prune-types.js";
import { runSteps, stepDue, type Steps } from "./steps.js";

/** What an edit leaves of its target: nothing (`null`), or new content. */
export type Replacement = ContextEditEntry["replacement"];

/** Target entry id → the latest replacement on the branch. Empty for sessions pi 1.6 never edited. */
export type ContextEdits = ReadonlyMap<string, Replacement>;

export const NO_EDITS: ContextEdits = new Map();

/** The edits among `branch` (the active branch, root → leaf): the latest of each target wins. */
export function editsOnBranch(branch: readonly SessionEntry[]): ContextEdits {
  return runSteps(editsOnBranchSteps(branch));
}

/** editsOnBranch, pausable (core/steps.ts). */
export function* editsOnBranchSteps(branch: readonly SessionEntry[]): Steps<ContextEdits> {
  let edits: Map<string, Replacement> | undefined;
  for (let index = 0; index < branch.length; index++) {
    if (stepDue(index)) yield;
    const entry = branch[index]!;
    if (entry.type === "context_edit" && isEdit(entry)) (edits ??= new Map()).set(entry.targetId, entry.replacement);
  }
  return edits ?? NO_EDITS;
}

/** Only a well-formed edit counts; pi would fail on any other, and chainpress leaves it out. */
function isEdit(entry: SessionEntry): entry is ContextEditEntry {
  const { targetId, replacement } = entry as Partial<ContextEditEntry>;
  if (typeof targetId !== "string") return false;
  if (replacement === null) return true;
  if (typeof replacement !== "object" || replacement === undefined) return false;
  const content = (replacement as { content?: unknown }).content;
  return typeof content === "string" || Array.isArray(content);
}

/** Roles whose content an edit may replace; other messages (summaries, system) are kept or omitted whole. */
const EDITABLE_ROLES: ReadonlySet<string> = new Set(["user", "assistant", "toolResult", "custom"]);

/**
 * `message` as the edit leaves it: undefined when omitted, a new object with the new content when
 * replaced (the message's other fields, its role, ids and timestamp, stay), itself when unedited.
 */
export function editedMessage(message: AgentMessage, replacement: Replacement | undefined): AgentMessage | undefined {
  if (replacement === undefined) return message;
  if (replacement === null) return undefined;
  if (!EDITABLE_ROLES.has(message.role)) return message;
  const needsParts = message.role === "assistant" || message.role === "toolResult";
  const content: string | ContentPart[] = needsParts && typeof replacement.content === "string" ? [{ type: "text", text: replacement.content }] : replacement.content;
  return { ...message, content } as AgentMessage;
}

/** The occurrence key of a tool result an edit targets, so that archived copies of it follow the edit. */
export interface EditedOutput {
  /** `null`: the projection omits the output; else the text it shows instead (text parts joined by "\n"). */
  text: string | null;
}

/**
 * Archived outputs whose tool result an edit on the branch changed: occurrence key → what the
 * projection shows of it. An edit that arrives after the output was archived still applies.
 */
export function editedOutputs(branch: readonly SessionEntry[], edits: ContextEdits): ReadonlyMap<string, EditedOutput> {
  const outputs = new Map<string, EditedOutput>();
  if (edits.size === 0) return outputs;
  for (const entry of branch) {
    if (entry.type !== "message" || !edits.has(entry.id)) continue;
    const message = (entry as { message?: AgentMessage }).message;
    if (message?.role !== "toolResult" || typeof message.toolCallId !== "string") continue;
    const edited = editedMessage(message, edits.get(entry.id));
    const key = occurrenceKey(message.toolCallId, resultTimestampOf(message.timestamp));
    outputs.set(key, { text: edited === undefined ? null : contentText(edited.content) });
  }
  return outputs;
}

/** What the model is shown instead of an output a context edit omitted. */
export const OMITTED_OUTPUT_TEXT = "[This output was omitted from the context by a context edit; it is not available.]";

/**
 * The text the model may read of an archived record: the edit's, when an edit on the branch
 * changed or omitted its tool result (an edit may be a redaction), else undefined (the archive's).
 */
export function editedRecordText(record: Pick<ToolCallRecord, "toolCallId" | "resultTimestamp">, outputs: ReadonlyMap<string, EditedOutput>): string | undefined {
  const edited = editedOutputOf(record, outputs);
  return edited === undefined ? undefined : (edited.text ?? OMITTED_OUTPUT_TEXT);
}

/** The edit of an archived record's output, when an edit on the branch changed or omitted it. */
export function editedOutputOf(record: Pick<ToolCallRecord, "toolCallId" | "resultTimestamp">, outputs: ReadonlyMap<string, EditedOutput>): EditedOutput | undefined {
  return outputs.size === 0 ? undefined : outputs.get(occurrenceKey(record.toolCallId, record.resultTimestamp));
}
