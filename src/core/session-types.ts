/**
 * Shapes of pi session files (JSONL, version 3) and of the agent messages inside them.
 * Only the fields chainpress reads are typed; everything else is carried through untouched.
 * Pure types: no runtime code.
 */

/** A text part of a message's content. */
export interface TextPart {
  type: "text";
  text: string;
}

/** A tool call block inside an assistant message. pi writes `arguments`; older writers used `input`/`args`. */
export interface ToolCallPart {
  type: "toolCall";
  id: string;
  name: string;
  arguments?: unknown;
  input?: unknown;
  args?: unknown;
}

/** Any content part; unknown part types (images, thinking, ...) are kept as-is. */
export type ContentPart = TextPart | ToolCallPart | { type: string; [key: string]: unknown };

export interface UserMessage {
  role: "user";
  content: string | ContentPart[];
  timestamp: number;
}

export interface AssistantMessage {
  role: "assistant";
  content: ContentPart[];
  timestamp: number;
  [key: string]: unknown;
}

export interface ToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: ContentPart[] | string;
  isError?: boolean;
  timestamp: number;
  [key: string]: unknown;
}

/** pi's `custom_message` entries as they appear in the model context. */
export interface CustomMessage {
  role: "custom";
  customType: string;
  content: string | ContentPart[];
  display?: boolean;
  details?: unknown;
  timestamp: number;
}

/** Every message role chainpress may meet; unknown roles (bashExecution, branchSummary, ...) pass through. */
export type AgentMessage =
  | UserMessage
  | AssistantMessage
  | ToolResultMessage
  | CustomMessage
  | { role: string; timestamp?: unknown; [key: string]: unknown };

/** First line of a session file. */
export interface SessionHeader {
  type: "session";
  /** Absent in version-1 files. */
  version?: number;
  id: string;
  timestamp?: string;
  cwd?: string;
  [key: string]: unknown;
}

/** Fields every non-header entry has once the file is version 2 or later. */
export interface EntryBase {
  type: string;
  id: string;
  parentId: string | null;
  timestamp: string;
  [key: string]: unknown;
}

export interface MessageEntry extends EntryBase {
  type: "message";
  message: AgentMessage;
}

export interface CustomEntry extends EntryBase {
  type: "custom";
  customType: string;
  data?: unknown;
}

export interface CustomMessageEntry extends EntryBase {
  type: "custom_message";
  customType: string;
  content: string | ContentPart[];
  display?: boolean;
  details?: unknown;
}

export interface CompactionEntry extends EntryBase {
  type: "compaction";
  summary: string;
  /** The first entry kept before the compaction; its own id (pi 1.6's retain-none) keeps none. */
  firstKeptEntryId?: string;
  tokensBefore?: number;
  /** pi 1.6: the prompt and tool checkpoint, sent as the context's leading system message. */
  systemMessage?: AgentMessage;
}

/**
 * pi 1.6: an append-only edit of what one earlier entry contributes to the model's context.
 * pi writes `null` (omit it) or `{content}` (replace its message content only). A file may hold
 * any value in either field, and pi 1.6 applies every one: core/context-edits.ts reads them as
 * pi's projection does.
 */
export interface ContextEditEntry extends EntryBase {
  type: "context_edit";
  /** The edited entry's id; any other value matches only an entry whose id is that same value. */
  targetId: unknown;
  /** As written: `null | { content: string | ContentPart[] }` when well-formed, anything when not. */
  replacement: unknown;
}

export interface BranchSummaryEntry extends EntryBase {
  type: "branch_summary";
  summary: string;
  fromId?: string;
}

/** Any entry after the header. Types chainpress does not know are kept and ignored. */
export type SessionEntry =
  | MessageEntry
  | CustomEntry
  | CustomMessageEntry
  | CompactionEntry
  | BranchSummaryEntry
  | ContextEditEntry
  | EntryBase;

/** The version pi writes today; older files are migrated to it before chainpress appends. */
export const CURRENT_SESSION_VERSION = 3;
