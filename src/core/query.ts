/**
 * `context_tree_query` lookup and output text (reference §7). Pure: the caller reads spilled
 * bodies (src/io/read-spill.ts) and hands them in, so this module never touches the disk.
 */

import { jsonText, nestsDeeperThan } from "./json-text.js";
import { occurrenceKey, parseOccurrenceKey, resultTimestampOf } from "./occurrence-key.js";
import { FIRST_PAGE, nextPageHint, pageOf, pageText, QUERY_MAX_BYTES, QUERY_MAX_LINES } from "./output-pages.js";
import type { PruneState } from "./prune-state.js";
import { partsSection, type PartLine } from "./query-parts.js";
import type { ToolCallRecord } from "./prune-types.js";
import type { AgentMessage, ToolResultMessage } from "./session-types.js";

/** One record an input string denoted. */
export interface QueryMatch {
  /** The input, or `<input>@<resultTimestamp>` when the input denoted several records. */
  label: string;
  record: ToolCallRecord;
  /** True for a record without resultTimestamp among several: its block says so explicitly. */
  legacy: boolean;
}

/** Separator between output blocks, within one input and across inputs. */
export const QUERY_BLOCK_SEPARATOR = "\n\n---\n\n";
/** Body shown when a spill file cannot be read and the record kept no preview. */
export const SPILL_UNAVAILABLE_TEXT = "(spilled output unavailable \u2014 sidecar file missing)";

function recordTime(record: ToolCallRecord): number {
  return record.resultTimestamp ?? record.timestamp;
}

/**
 * Every occurrence of a bare id: indexed ones plus dedup-alias ones. An alias occurrence shows
 * the original's record under the alias's own resultTimestamp, so each occurrence keeps its
 * identity. Sorted oldest first (stable).
 */
function occurrencesOfBareId(state: PruneState, id: string): ToolCallRecord[] {
  const found: ToolCallRecord[] = [];
  for (const key of state.keysOf(id)) {
    const record = state.records.get(key);
    if (record) found.push(record);
  }
  for (const [aliasKey, originalKey] of state.dedupAliases) {
    const alias = parseOccurrenceKey(aliasKey);
    // An alias key that is also indexed was already listed above.
    const original = alias.toolCallId === id && !state.records.has(aliasKey) ? state.records.get(originalKey) : undefined;
    if (original) found.push(withResultTimestamp(original, alias.resultTimestamp));
  }
  return found.sort((a, b) => recordTime(a) - recordTime(b));
}

function withResultTimestamp(record: ToolCallRecord, resultTimestamp: number | undefined): ToolCallRecord {
  const copy = { ...record };
  if (resultTimestamp === undefined) delete copy.resultTimestamp;
  else copy.resultTimestamp = resultTimestamp;
  return copy;
}

/** Single-record resolution: exact key → dedup alias key → short ref → bare id with one occurrence. */
function resolveOne(state: PruneState, input: string): ToolCallRecord | undefined {
  const exact = state.records.get(input);
  if (exact) return exact;
  const original = state.dedupAliases.get(input);
  const aliased = original === undefined ? undefined : state.records.get(original);
  if (aliased) return aliased;
  const refKey = state.keyByRef.get(input);
  const byRef = refKey === undefined ? undefined : state.recordForKey(refKey);
  if (byRef) return byRef;
  const keys = state.keysOf(input);
  return keys.length === 1 ? state.records.get(keys[0]!) : undefined;
}

/** The records one input string denotes, in output order; empty when not found. */
export function findRecords(state: PruneState, input: string): QueryMatch[] {
  const occurrences = occurrencesOfBareId(state, input);
  if (occurrences.length === 0) {
    const record = resolveOne(state, input);
    return record ? [{ label: input, record, legacy: false }] : [];
  }
  if (occurrences.length === 1) return [{ label: input, record: occurrences[0]!, legacy: false }];
  return occurrences.map((record) => {
    const legacy = record.resultTimestamp === undefined;
    return { label: legacy ? input : occurrenceKey(input, record.resultTimestamp), record, legacy };
  });
}

export interface HeadTruncation {
  text: string;
  truncated: boolean;
  shownLines: number;
  totalLines: number;
}

/**
 * pi's head truncation: whole lines only, stop at the first limit hit; a first line alone over
 * the byte limit shows nothing, as in pi (truncatedBody shows a page of it instead).
 */
export function truncateHead(text: string, maxLines = QUERY_MAX_LINES, maxBytes = QUERY_MAX_BYTES): HeadTruncation {
  const lines = text.split("\n");
  const totalLines = lines.length;
  if (totalLines <= maxLines && Buffer.byteLength(text, "utf8") <= maxBytes) return { text, truncated: false, shownLines: totalLines, totalLines };
  let bytes = 0;
  let shown = 0;
  for (; shown < lines.length && shown < maxLines; shown++) {
    const lineBytes = Buffer.byteLength(lines[shown]!, "utf8") + (shown > 0 ? 1 : 0);
    if (bytes + lineBytes > maxBytes) break;
    bytes += lineBytes;
  }
  return { text: lines.slice(0, shown).join("\n"), truncated: true, shownLines: shown, totalLines };
}

/**
 * The body as the model reads it: truncated, with pi's note when anything was cut, which says
 * what to pass for the next page of `ref` (core/output-pages.ts). As for every page, the page is
 * the text before the line break that precedes the note, so the next page starts at the line
 * break that ends the last line shown ("L:C" with C one past that line's end). A first line
 * alone over the byte limit would show nothing: with a ref, the body is then the output's first
 * page, a piece of that line, exactly as offset 1 gives it.
 */
export function truncatedBody(body: string, ref?: string): string {
  const cut = truncateHead(body);
  if (!cut.truncated) return cut.text;
  const note = `[Output truncated: ${cut.shownLines}/${cut.totalLines} lines shown`;
  if (ref === undefined) return `${cut.text}\n${note}]`;
  if (cut.shownLines === 0) return firstPageText(body, ref);
  const lastLine = cut.text.length - (cut.text.lastIndexOf("\n") + 1);
  return `${cut.text}\n${note}; ${nextPageHint(ref, `${cut.shownLines}:${lastLine + 1}`)}]`;
}

function firstPageText(body: string, ref: string): string {
  const page = pageOf(body, FIRST_PAGE);
  // The first page of any output exists: only a place past the end is refused.
  if (typeof page === "string") throw new Error(`${ref}: ${page}`);
  return pageText(ref, page);
}

/** What to show for a spilled record whose file could not be read. */
export function unavailableSpillBody(record: ToolCallRecord): string {
  return record.resultPreview ?? SPILL_UNAVAILABLE_TEXT;
}

/** What a reader of the output may know beyond the records (all optional: the tool passes none). */
export interface QueryContext {
  /** Why a match's full output could not be read (a missing or corrupt spill file), by match index. */
  problems?: ReadonlyArray<string | undefined>;
  /** The session's user turn of a record that carries no turn of its own (backfilled: turnIndex -1). */
  turnOf?: (record: ToolCallRecord) => number | undefined;
  /** A match's non-text parts as the query lists them (core/query-parts.ts), by match index; none for a text-only output. */
  parts?: ReadonlyArray<{ total: number; lines: readonly PartLine[] } | undefined>;
  /** The call asked for given parts (`parts`): the blocks show no text. */
  partsOnly?: boolean;
}

/** The body of a block in a call that asked for parts only. */
export const PARTS_ONLY_BODY = "[Text not shown: this call asked for parts only; ask without parts to read the text]";

/**
 * "Status: OK" describes the tool call; above a body that is only a preview of an unreadable
 * spill file it would read as "this is the output", so that case says what happened instead.
 */
function statusLine(record: ToolCallRecord, problem: string | undefined): string {
  if (problem !== undefined) return `Status: OUTPUT UNAVAILABLE \u2014 ${problem}; only the preview below is left`;
  return `Status: ${record.isError ? "ERROR" : "OK"}`;
}

function turnLine(record: ToolCallRecord, context: QueryContext): string {
  if (record.turnIndex >= 0) return `Turn: ${record.turnIndex}`;
  const turn = context.turnOf?.(record);
  return turn === undefined ? `Turn: ${record.turnIndex}` : `Turn: ${turn} (user turn in the session; the archive records none)`;
}

/**
 * Args nested deeper than this are printed on one line: indented, each level repeats its
 * indentation on every line below it, and 100,000 levels (which a session line can hold) would take
 * gigabytes. A real call's arguments nest a few levels.
 */
const ARGS_INDENT_MAX_DEPTH = 1000;

function argsText(args: unknown): string {
  return nestsDeeperThan(args, ARGS_INDENT_MAX_DEPTH) ? jsonText(args) : JSON.stringify(args, null, 2);
}

function matchBlock(match: QueryMatch, index: number, body: string, problem: string | undefined, context: QueryContext): string {
  const header = [`## toolRef: ${match.label}`];
  if (match.legacy) header.push("Occurrence: legacy (no resultTimestamp)");
  header.push(
    `Tool: ${match.record.toolName}`,
    `Args: ${argsText(match.record.args)}`,
    statusLine(match.record, problem),
    turnLine(match.record, context),
  );
  const parts = context.parts?.[index];
  if (parts !== undefined) header.push(...partsSection(match.label, parts.lines, parts.total));
  return `${header.join("\n")}\n\n${context.partsOnly === true ? PARTS_ONLY_BODY : truncatedBody(body, match.label)}`;
}

/**
 * The text for one input: its blocks joined by the separator (join several inputs' texts with
 * the same separator). `bodies[i]` is the full output of `matches[i]`, untruncated.
 */
export function formatQueryResult(input: string, matches: readonly QueryMatch[], bodies: readonly string[], context: QueryContext = {}): string {
  if (matches.length === 0) return `## toolRef: ${input}\n(not found in index \u2014 may not have been summarized yet)`;
  return matches.map((match, i) => matchBlock(match, i, bodies[i] ?? "", context.problems?.[i], context)).join(QUERY_BLOCK_SEPARATOR);
}

/** `details.results` of the tool result: records by label, later labels overwriting earlier. */
export function queryDetails(matches: readonly QueryMatch[]): { results: Record<string, ToolCallRecord> } {
  const results: Record<string, ToolCallRecord> = {};
  for (const match of matches) results[match.label] = match.record;
  return { results };
}

/**
 * 1-based user turn of every tool result on a branch, by occurrence key: the number of user
 * messages up to it. Lets `chainpress query` show a turn for backfilled records.
 */
export function userTurnsByResult(messages: readonly AgentMessage[]): Map<string, number> {
  const turns = new Map<string, number>();
  let turn = 0;
  for (const message of messages) {
    if (message.role === "user") turn++;
    else if (message.role === "toolResult") {
      const result = message as ToolResultMessage;
      if (typeof result.toolCallId === "string") turns.set(occurrenceKey(result.toolCallId, resultTimestampOf(result.timestamp)), turn);
    }
  }
  return turns;
}
