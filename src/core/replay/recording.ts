/**
 * A session's branch as a replay needs it: its requests (the assistant messages, in order; one
 * without `usage` is replayed on estimates) and, for each, the context pi sent (`contextMessages` of the branch up to,
 * not including, that assistant message), as message identities. Built in one pass: each entry's
 * contribution is appended, and the context is rebuilt only where pi's own rule restarts or
 * changes it: at a compaction (checkpoint, summary, kept messages) and at a context edit (the
 * edits on the branch so far apply). As pi-ai's provider transform does, an assistant message that
 * ended in error or was aborted is not sent again. Pure.
 */

import { editsOnBranch, type ContextEdits } from "../context-edits.js";
import { contextMessagesSteps, DERIVED_MESSAGE } from "../session-tree.js";
import { runSteps } from "../steps.js";
import type { AgentMessage, SessionEntry } from "../session-types.js";
import { EMPTY_CONTEXT, nextContext, type ContextRef } from "./context-store.js";
import { estimateTokens, MessageTable } from "./message-table.js";

/** Token counts and dollars as pi records them on an assistant message. */
export interface TokenSplit {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

/** Dollars by component, and their sum. */
export interface CostSplit extends TokenSplit {
  total: number;
}

export interface RecordedRequest {
  /** Position among the requests. */
  index: number;
  /** Position of its assistant message in the branch. */
  entryIndex: number;
  entryId: string;
  /** Epoch ms: the assistant message's timestamp (else its entry's). */
  time: number;
  provider: string;
  model: string;
  stopReason: string | undefined;
  /** False when the message records no `usage`: its prompt is estimated, its output too. */
  recorded: boolean;
  /** Recorded tokens (missing fields as 0). */
  tokens: TokenSplit;
  /** Output tokens as recorded, or estimated from the reply's characters (pi's chars / 4) where none are. */
  outputTokens: number;
  /** Recorded dollars, or null when the message records none. */
  cost: CostSplit | null;
  /** input + cacheRead + cacheWrite as recorded. */
  promptTokens: number;
  /** False when the request recorded usage with no tokens at all (aborted before any): it is billed nothing in every replay. */
  billed: boolean;
  /** A user message (role "user") came since the request before: a new prompt of the user's, not a tool turn. */
  afterUser: boolean;
  /** pi's thinking level changed since the request before (Anthropic may then void cached messages; not modelled, see cache-model.ts). */
  thinkingChanged: boolean;
}

export interface Recording {
  branch: readonly SessionEntry[];
  requests: RecordedRequest[];
  /** The context each request sent, as run (item i goes with request i). */
  contexts: ContextRef[];
  /** Every message met, the recording's and any a policy adds later. */
  table: MessageTable;
}

/** Reads the branch (root → leaf, as core/session-tree.ts `buildBranch` gives it). */
export function recordingOf(branch: readonly SessionEntry[]): Recording {
  const table = new MessageTable();
  const requests: RecordedRequest[] = [];
  const contexts: ContextRef[] = [];
  let context = EMPTY_CONTEXT;
  let edits: Map<unknown, unknown> | undefined;
  const thinking = { level: undefined as unknown, changed: false };
  let afterUser = false;
  for (let index = 0; index < branch.length; index++) {
    const entry = branch[index]!;
    noteThinkingLevel(entry, thinking);
    if (isUserMessage(entry)) afterUser = true;
    const request = requestOf(entry, index, requests.length, thinking.changed, afterUser);
    if (request !== undefined) {
      requests.push(request);
      contexts.push(context);
      thinking.changed = false;
      afterUser = false;
    }
    if (entry.type === "context_edit") edits = undefined; // the edits so far are read again below
    if (entry.type === "compaction" || entry.type === "context_edit") {
      const upTo = branch.slice(0, index + 1);
      edits ??= editsOnBranch(upTo) as Map<unknown, unknown>;
      context = nextContext(context, 0, idsOfContext(table, upTo, edits as ContextEdits));
    } else {
      context = nextContext(context, context.length, idsOfContext(table, [entry], (edits ?? new Map()) as ContextEdits));
    }
  }
  return { branch, requests, contexts, table };
}

/** The identities of contextMessages(entries, edits): own message objects by identity, others by text. */
function idsOfContext(table: MessageTable, entries: readonly SessionEntry[], edits: ContextEdits): number[] {
  const slots = new Int32Array(entries.length + 2);
  const messages = runSteps(contextMessagesSteps(entries, slots, edits));
  const ids: number[] = [];
  messages.forEach((message, k) => {
    if (!isUnsent(message)) ids.push(slots[k] === DERIVED_MESSAGE ? table.idOfDerived(message) : table.idOfOwn(message));
  });
  return ids;
}

/** The messages of a context the provider is sent: pi-ai's transform leaves out each assistant message that ended in error or was aborted. A policy's contexts go through it too. */
export function sentMessages(messages: readonly AgentMessage[]): AgentMessage[] {
  return messages.filter((message) => !isUnsent(message));
}

function isUnsent(message: AgentMessage): boolean {
  return message.role === "assistant" && (message.stopReason === "error" || message.stopReason === "aborted");
}

/**
 * Follows `thinking_level_change` entries: `changed` once an entry's level differs from the entry
 * before's (the first entry's change from pi's default is not known), even where the level
 * came back: the check reports a cache miss after one as such.
 */
function noteThinkingLevel(entry: SessionEntry, thinking: { level: unknown; changed: boolean }): void {
  if (entry.type !== "thinking_level_change") return;
  const level = (entry as { thinkingLevel?: unknown }).thinkingLevel;
  if (thinking.level !== undefined && level !== thinking.level) thinking.changed = true;
  thinking.level = level;
}

/** The request an entry records, if it is an assistant message. */
function isUserMessage(entry: SessionEntry): boolean {
  return entry.type === "message" && (entry as { message?: { role?: unknown } }).message?.role === "user";
}

function requestOf(entry: SessionEntry, entryIndex: number, index: number, thinkingChanged: boolean, afterUser: boolean): RecordedRequest | undefined {
  if (entry.type !== "message") return undefined;
  const message = (entry as { message?: unknown }).message as AgentMessage | undefined;
  if (typeof message !== "object" || message === null || message.role !== "assistant") return undefined;
  const recorded = typeof message.usage === "object" && message.usage !== null;
  const usage = (recorded ? message.usage : {}) as Record<string, unknown>;
  const tokens = { input: count(usage.input), cacheRead: count(usage.cacheRead), cacheWrite: count(usage.cacheWrite), output: count(usage.output) };
  const promptTokens = tokens.input + tokens.cacheRead + tokens.cacheWrite;
  return {
    index,
    entryIndex,
    entryId: entry.id,
    time: typeof message.timestamp === "number" ? message.timestamp : Date.parse(entry.timestamp),
    provider: typeof message.provider === "string" ? message.provider : "",
    model: typeof message.model === "string" ? message.model : "",
    stopReason: typeof message.stopReason === "string" ? message.stopReason : undefined,
    recorded,
    tokens,
    outputTokens: recorded ? tokens.output : estimateTokens(JSON.stringify(message.content ?? "").length),
    cost: costOf(usage.cost),
    promptTokens,
    billed: !recorded || promptTokens + tokens.output > 0,
    afterUser,
    thinkingChanged,
  };
}

function costOf(value: unknown): CostSplit | null {
  if (typeof value !== "object" || value === null) return null;
  const cost = value as Record<string, unknown>;
  return { input: count(cost.input), cacheRead: count(cost.cacheRead), cacheWrite: count(cost.cacheWrite), output: count(cost.output), total: count(cost.total) };
}

/** A finite non-negative number, else 0. */
function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}
