/**
 * pi 1.6's `context_edit` entries, applied as pi's projection applies them: an edit changes what
 * one earlier entry contributes to the model's context, never the entry itself. On the active
 * branch the latest edit of a target wins (edits on other branches do not count); `null` omits
 * the target's messages; `{content}` replaces the content of a user, assistant, tool-result or
 * custom message only, a string for an assistant or tool result becoming one text block.
 *
 * pi applies every edit, whatever its shape (session-manager.js, projectContextEntry): a
 * replacement that is not `null` sets such a message's content to `replacement.content`, which for
 * any other shape (a string, number, boolean, array, `{}`, `{content: 42}`, `{content: null}`,
 * `{content: {...}}`) is not the original; with no replacement at all pi's projection throws.
 * chainpress reads every such edit as CONTENT_HIDDEN: the message stays, with no content. It
 * never shows what pi hides, and shows nothing where it cannot tell what pi would show.
 * Pure functions over entries already in memory.
 */

import { contentText } from "./message-text.js";
import { occurrenceKey, resultTimestampOf } from "./occurrence-key.js";
import { isObject } from "./entry-shapes.js";
import type { AgentMessage, ContentPart, SessionEntry } from "./session-types.js";
import type { ToolCallRecord } from "./prune-types.js";
import { runSteps, stepDue, type Steps } from "./steps.js";

/** A replacement as pi writes it. */
export interface ContentReplacement {
  content: string | ContentPart[];
}

/** An edit whose replacement is neither `null` nor a ContentReplacement: its target keeps no content. */
export const CONTENT_HIDDEN: unique symbol = Symbol("content hidden by a malformed context edit");

/** What an edit leaves of its target: nothing (`null`), new content, or no content (CONTENT_HIDDEN). */
export type Replacement = null | ContentReplacement | typeof CONTENT_HIDDEN;

/**
 * Target id → the latest replacement on the branch. Keyed by `targetId` as written and looked up
 * by entry id, as pi's map is: a targetId that is not a string matches no entry chainpress reads.
 * Empty for sessions pi 1.6 never edited.
 */
export type ContextEdits = ReadonlyMap<unknown, Replacement>;

export const NO_EDITS: ContextEdits = new Map();

/** The edits among `branch` (the active branch, root → leaf): the latest of each target wins. */
export function editsOnBranch(branch: readonly SessionEntry[]): ContextEdits {
  return runSteps(editsOnBranchSteps(branch));
}

/** editsOnBranch, pausable (core/steps.ts). */
export function* editsOnBranchSteps(branch: readonly SessionEntry[]): Steps<ContextEdits> {
  let edits: Map<unknown, Replacement> | undefined;
  for (let index = 0; index < branch.length; index++) {
    if (stepDue(index)) yield;
    const entry = branch[index]!;
    if (entry.type !== "context_edit") continue;
    const { targetId, replacement } = entry as { targetId?: unknown; replacement?: unknown };
    (edits ??= new Map()).set(targetId, replacementOf(replacement));
  }
  return edits ?? NO_EDITS;
}

/** An edit's replacement as chainpress applies it: `null` and a ContentReplacement as written (the same object), anything else CONTENT_HIDDEN. */
export function replacementOf(replacement: unknown): Replacement {
  if (replacement === null) return null;
  if (isObject(replacement) && (typeof replacement.content === "string" || Array.isArray(replacement.content))) return replacement as unknown as ContentReplacement;
  return CONTENT_HIDDEN;
}

/** Roles whose content an edit may replace; other messages (summaries, system) are kept or omitted whole. */
const EDITABLE_ROLES: ReadonlySet<string> = new Set(["user", "assistant", "toolResult", "custom"]);

/**
 * `message` as the edit leaves it: undefined when omitted, a new object with the new content when
 * replaced (the message's other fields, its role, ids and timestamp, stay; no content at all,
 * `[]`, for CONTENT_HIDDEN), itself when unedited.
 */
export function editedMessage(message: AgentMessage, replacement: Replacement | undefined): AgentMessage | undefined {
  if (replacement === undefined) return message;
  if (replacement === null) return undefined;
  if (!EDITABLE_ROLES.has(message.role)) return message;
  if (replacement === CONTENT_HIDDEN) return { ...message, content: [] } as AgentMessage;
  const needsParts = message.role === "assistant" || message.role === "toolResult";
  const content: string | ContentPart[] = needsParts && typeof replacement.content === "string" ? [{ type: "text", text: replacement.content }] : replacement.content;
  return { ...message, content } as AgentMessage;
}

/** The occurrence key of a tool result an edit targets, so that archived copies of it follow the edit. */
export interface EditedOutput {
  /** `null`: the model is shown none of the output (see `hidden`); else the text it shows instead (text parts joined by "\n"). */
  text: string | null;
  /** Set, with `text` null, when a malformed edit hid the output's content (CONTENT_HIDDEN) rather than omitting the message. */
  hidden?: true;
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
    const replacement = edits.get(entry.id)!;
    const key = occurrenceKey(message.toolCallId, resultTimestampOf(message.timestamp));
    outputs.set(key, replacement === CONTENT_HIDDEN ? { text: null, hidden: true } : { text: textLeftBy(message, replacement) });
  }
  return outputs;
}

/** The text the projection shows of a tool result `replacement` edits; null when omitted. */
function textLeftBy(message: AgentMessage, replacement: null | ContentReplacement): string | null {
  const edited = editedMessage(message, replacement);
  return edited === undefined ? null : contentText(edited.content);
}

/** What the model is shown instead of an output a context edit omitted. */
export const OMITTED_OUTPUT_TEXT = "[This output was omitted from the context by a context edit; it is not available.]";

/** What the model is shown instead of an output whose content a malformed context edit hid. */
export const HIDDEN_OUTPUT_TEXT = "[This output's content was hidden from the context by a context edit; it is not available.]";

/**
 * The text the model may read of an archived record: the edit's, when an edit on the branch
 * changed or omitted its tool result (an edit may be a redaction), else undefined (the archive's).
 */
export function editedRecordText(record: Pick<ToolCallRecord, "toolCallId" | "resultTimestamp">, outputs: ReadonlyMap<string, EditedOutput>): string | undefined {
  const edited = editedOutputOf(record, outputs);
  if (edited === undefined) return undefined;
  return edited.text ?? (edited.hidden === true ? HIDDEN_OUTPUT_TEXT : OMITTED_OUTPUT_TEXT);
}

/** The edit of an archived record's output, when an edit on the branch changed or omitted it. */
export function editedOutputOf(record: Pick<ToolCallRecord, "toolCallId" | "resultTimestamp">, outputs: ReadonlyMap<string, EditedOutput>): EditedOutput | undefined {
  return outputs.size === 0 ? undefined : outputs.get(occurrenceKey(record.toolCallId, record.resultTimestamp));
}
