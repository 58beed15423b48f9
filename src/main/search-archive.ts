/**
 * A search of the whole archive, for context_tree_query and `chainpress query --search`: the
 * archived records become search documents on this thread (metadata only), are sent to the
 * worker pool in batches (so no archived byte is scanned here, and no one message is large), and
 * the hits come back to be ranked. One deadline covers the whole search.
 *
 * `hasImages` keeps the outputs that hold images (true) or none (false), as the map marks them: an
 * output a context edit changed holds none, since the edit hides its parts too. Without a pattern
 * the search is a listing of what the filters keep, newest first (core/archive-search.ts).
 */

import { callTarget } from "../core/call-target.js";
import { compareHits, type SearchHit, type SearchPattern } from "../core/archive-search.js";
import { holdsImages } from "../core/archived-parts.js";
import { editedOutputOf, type EditedOutput } from "../core/context-edits.js";
import { CLONE_MAX_DEPTH, jsonText, nestsDeeperThan } from "../core/json-text.js";
import { partsNoteOf } from "../core/part-notes.js";
import type { QueryRequest } from "../core/query-request.js";
import type { PruneState } from "../core/prune-state.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import type { SearchSource, SearchTaskDoc, SearchTaskResult } from "../workers/search-task.js";
import { pauseIfDue, sliceUsedUp } from "./cooperative.js";
import { searchDeadline, type ChainRunner } from "./runner-contract.js";

export interface SearchRequest {
  /** Undefined: list the outputs the filters keep, newest first. */
  pattern: SearchPattern | undefined;
  /** Only outputs that hold images (true), or that hold none (false). */
  hasImages?: boolean;
  /** Only calls of these tools (exact names). */
  toolNames?: readonly string[];
  /** Only the outputs of this compressed chain (`b3`). */
  blockId?: string;
  /** Hits returned at most, best first. */
  limit: number;
}

export interface SearchOutcome {
  /** The best `limit` hits, best first. */
  hits: SearchHit[];
  /** Hits found in all. */
  total: number;
  /** Archived outputs searched. */
  searched: number;
  /** Spilled outputs whose file could not be read. */
  unreadable: SearchTaskResult["unreadable"];
}

export interface SearchScope {
  state: PruneState;
  /** Outputs a context edit changed: searched as edited, or not at all when omitted. */
  editedOutputs: ReadonlyMap<string, EditedOutput>;
  /** The session's blob folder as it is now: the only place spill files are read (io/read-spill.ts); undefined when the session has no file. */
  blobDir: string | undefined;
  runner: ChainRunner;
  /** The whole search's deadline (default SEARCH_DEADLINE_MS). */
  deadlineMs?: number;
}

/** Long enough for a literal search of a very large archive on two cores; a runaway expression ends here. */
export const SEARCH_DEADLINE_MS = 20_000;
/** Inline output text sent in one task: its copy to the worker stays a short stall of this thread. */
const BATCH_INLINE_CHARS = 2_000_000;
/** Spilled outputs per task: the files of a large archive are read by every worker, not one. */
const BATCH_SPILLED = 32;

/** A parsed search request (core/query-request.ts) as searchArchive takes it. */
export function searchRequestOf(request: Extract<QueryRequest, { kind: "search" }>): SearchRequest {
  const { pattern, hasImages, toolNames, blockId, limit } = request;
  return { pattern, limit, ...(hasImages !== undefined ? { hasImages } : {}), ...(toolNames ? { toolNames } : {}), ...(blockId ? { blockId } : {}) };
}

export async function searchArchive(scope: SearchScope, request: SearchRequest): Promise<SearchOutcome> {
  const { docs, records } = await documentsOf(scope, request);
  const deadline = searchDeadline(scope.deadlineMs ?? SEARCH_DEADLINE_MS);
  const tasks = batches(docs).map((batch) => scope.runner.search({ kind: "search-archive", pattern: request.pattern, docs: batch }, deadline));
  const results = await Promise.all(tasks);
  const hits = results.flatMap((result) => result.hits).sort(compareHits);
  const shown = hits.slice(0, request.limit).map((hit) => withParts(hit, records[hit.order]));
  return { hits: shown, total: hits.length, searched: docs.length, unreadable: results.flatMap((result) => result.unreadable) };
}

type TaskDoc = SearchTaskDoc;

/** A shown hit with what its output's non-text parts are, unless an edit hid them (`record` undefined). */
function withParts(hit: SearchHit, record: ToolCallRecord | undefined): SearchHit {
  const note = partsNoteOf(record?.parts);
  return note === undefined ? hit : { ...hit, parts: note };
}

/**
 * The archive's records as search documents, oldest first; an omitted output is not searchable.
 * `records[order]` is each document's record, or undefined where an edit changed its output.
 */
async function documentsOf(scope: SearchScope, request: SearchRequest): Promise<{ docs: TaskDoc[]; records: Array<ToolCallRecord | undefined> }> {
  const { state } = scope;
  const blockOf = blocksByRef(state);
  const tools = request.toolNames === undefined || request.toolNames.length === 0 ? undefined : new Set(request.toolNames);
  const docs: TaskDoc[] = [];
  const records: Array<ToolCallRecord | undefined> = [];
  for (const [key, record] of state.records) {
    if (sliceUsedUp()) await pauseIfDue();
    if (tools !== undefined && !tools.has(record.toolName)) continue;
    const ref = state.displayRef(key);
    const blockId = blockOf.get(ref) ?? null;
    if (request.blockId !== undefined && blockId !== request.blockId) continue;
    const edited = editedOutputOf(record, scope.editedOutputs);
    // What the projection omits is not there to be found.
    if (edited?.text === null) continue;
    // An edit hides the output's parts with the rest of it.
    if (request.hasImages !== undefined && (edited === undefined && holdsImages(record.parts)) !== request.hasImages) continue;
    const source = edited === undefined ? sourceOf(record, scope.blobDir) : inline(edited.text);
    docs.push({ ref, toolCallId: record.toolCallId, toolName: record.toolName, target: callTarget(record.args), blockId, ...argsOf(record.args), order: docs.length, source });
    records.push(edited === undefined ? record : undefined);
  }
  return { docs, records };
}

/** A record's args as a document carries them: as they are, or as JSON when too deep to clone. */
function argsOf(args: unknown): Pick<TaskDoc, "args" | "argsJson"> {
  return nestsDeeperThan(args, CLONE_MAX_DEPTH) ? { args: undefined, argsJson: jsonText(args ?? null) } : { args };
}

function inline(text: string): SearchSource {
  return { kind: "inline", text };
}

function sourceOf(record: ToolCallRecord, blobDir: string | undefined): SearchSource {
  if (!record.spillPath) return inline(record.resultText);
  const { toolCallId, toolName, spillPath, spillBytes, spillDigest, contentHash, resultTimestamp } = record;
  return { kind: "spill", record: { toolCallId, toolName, spillPath, spillBytes, spillDigest, contentHash, resultTimestamp }, blobDir };
}

/** Each ref's compressed chain, from the chain entries' `toolRefs`. */
function blocksByRef(state: PruneState): Map<string, string> {
  const byRef = new Map<string, string>();
  for (const entry of state.chains.values()) for (const ref of entry.toolRefs ?? []) byRef.set(ref, entry.blockId);
  return byRef;
}

/** Documents in tasks of bounded inline text and spill count, in archive order. */
function batches(docs: readonly TaskDoc[]): TaskDoc[][] {
  const out: TaskDoc[][] = [];
  let current: TaskDoc[] = [];
  let chars = 0;
  let spilled = 0;
  for (const doc of docs) {
    const size = doc.source.kind === "inline" ? doc.source.text.length : 0;
    if (current.length > 0 && (chars + size > BATCH_INLINE_CHARS || spilled >= BATCH_SPILLED)) {
      out.push(current);
      current = [];
      chars = 0;
      spilled = 0;
    }
    current.push(doc);
    chars += size;
    if (doc.source.kind === "spill") spilled++;
  }
  if (current.length > 0) out.push(current);
  return out;
}
