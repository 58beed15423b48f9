/**
 * The `context_tree_query` tool (reference §7): the model names archived outputs by short ref
 * (`t12`), bare tool-call id or occurrence key (`id@ts`) and gets the original bytes back, from
 * the archive record or its verified spill file, with the output's images attached after the text
 * as pi's `read` attaches one (within a budget per call, core/query-parts.ts; `parts` asks for
 * given ones); reads one page of an output's text with `offset`; or finds outputs with `search`
 * (core/query-request.ts). An unknown ref or a bad request is an
 * error, thrown as pi-agent-core expects, so the model sees a failed call instead of an empty success.
 */

import type { AgentToolResult, ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { QUERY_TOOL_NAME } from "../core/custom-types.js";
import type { EditedOutput } from "../core/context-edits.js";
import { loadHasher } from "../core/digest.js";
import type { PruneState } from "../core/prune-state.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import { findRecords, formatQueryResult, QUERY_BLOCK_SEPARATOR, queryDetails, unavailableSpillBody, type QueryMatch } from "../core/query.js";
import { formatOffset, pageOf, pageText, type PagePlace } from "../core/output-pages.js";
import { digitGroups } from "../core/digit-groups.js";
import { MAX_IMAGE_CHARS_PER_CALL, MAX_IMAGES_PER_CALL } from "../core/query-parts.js";
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, parseQueryRequest, type QueryRequest } from "../core/query-request.js";
import { searchJson, searchText } from "../core/search-report.js";
import { callParts, readArchivedOutput, readRecordText, type QueriedParts } from "../main/archived-output.js";
import { searchArchive, searchRequestOf } from "../main/search-archive.js";
import type { Chainpress } from "./runtime.js";
import { blobDirOf } from "./state-holder.js";

export const queryParameters = Type.Object({
  toolCallIds: Type.Optional(
    Type.Array(Type.String(), {
      description: "Refs of archived outputs to read: short refs like t12 (from <compressed-chain> maps and stubs), tool-call ids, or id@timestamp",
    }),
  ),
  offset: Type.Optional(
    Type.Union([Type.String(), Type.Number()], {
      description: 'With one ref: the page of its text to read, from a 1-based line ("2001"), or "L:C" for character C of a line too long for one page; each page\'s last line says what to pass next. Pages hold text only, never images',
    }),
  ),
  parts: Type.Optional(
    Type.Array(Type.Number(), {
      description: "With one ref: only these of its non-text parts (numbered from 1 as its Parts list shows them), images attached, without its text; for images a call left out",
    }),
  ),
  search: Type.Optional(Type.String({ description: "Instead of refs: text to find in every archived output and its call's args (literal, case-insensitive)" })),
  regex: Type.Optional(Type.Boolean({ description: "search is a JavaScript regular expression" })),
  caseSensitive: Type.Optional(Type.Boolean({ description: "match case in search" })),
  toolNames: Type.Optional(Type.Array(Type.String(), { description: "search only calls of these tools" })),
  blockId: Type.Optional(Type.String({ description: 'search only one compressed chain, e.g. "b3"' })),
  limit: Type.Optional(Type.Number({ description: `most hits to return, best first (default ${DEFAULT_SEARCH_LIMIT}, at most ${MAX_SEARCH_LIMIT})` })),
  hasImages: Type.Optional(Type.Boolean({ description: "search only outputs that hold images (true) or none (false); true without search lists the outputs holding images, newest first" })),
});

export type QueryDetails = { results: Record<string, ToolCallRecord> } | { search: object } | { page: { ref: string; next: string | null } };

export function registerQueryTool(runtime: Chainpress, pi: ExtensionAPI): void {
  pi.registerTool({
    name: QUERY_TOOL_NAME,
    label: "Query Original Tool History",
    description:
      `The archive of outputs chainpress took out of the context (compressed chains, stubs, spilled outputs). Read outputs by ref (toolCallIds, as the maps and stubs show them), one page at a time with offset, or find them with search. An output's images come back as images after the text, at most ${MAX_IMAGES_PER_CALL} and ${digitGroups(MAX_IMAGE_CHARS_PER_CALL)} base64 characters per call; its Parts list says which were left out, and parts gets them. Pages (offset) hold text only.`,
    promptSnippet: "find archived tool outputs (search) and read them whole or page by page (toolCallIds, offset), images included (parts)",
    parameters: queryParameters,
    execute: async (_toolCallId, params, _signal, _onUpdate, ctx) => {
      const request = parseQueryRequest(params);
      if (typeof request === "string") throw new Error(request);
      // Without a session the edits are unknown, and an edit may hide an output: nothing is read.
      const session = ctx?.sessionManager ?? runtime.holder.session;
      if (session === undefined) throw new Error(`${QUERY_TOOL_NAME}: no session is loaded; nothing can be read`);
      const scope = { state: runtime.holder.state, blobDir: blobDirOf(session), edited: runtime.holder.edits.editedOutputs(session) };
      if (request.kind === "refs") return queryArchive(scope.state, request.refs, scope.blobDir, scope.edited, request.parts);
      if (request.kind === "page") return queryPage(scope.state, request.ref, request.from, scope.blobDir, scope.edited);
      return querySearch(runtime, scope, request);
    },
  });
}

/** One page of one output (core/output-pages.ts); throws for a ref that names none or several, or an offset past the end. */
export async function queryPage(state: PruneState, ref: string, from: PagePlace, blobDir: string | undefined, edited: ReadonlyMap<string, EditedOutput>): Promise<AgentToolResult<QueryDetails>> {
  const read = await readArchivedOutput(state, ref, edited, blobDir);
  if (!read.ok) throw new Error(read.message);
  const page = pageOf(read.text, from);
  if (typeof page === "string") throw new Error(`${read.match.label}: ${page}`);
  return { content: [{ type: "text", text: pageText(read.match.label, page) }], details: { page: { ref: read.match.label, next: page.next === null ? null : formatOffset(page.next) } } };
}

/** A search of the archive on the worker pool, within its deadline. */
async function querySearch(runtime: Chainpress, scope: { state: PruneState; blobDir: string | undefined; edited: ReadonlyMap<string, EditedOutput> }, request: Extract<QueryRequest, { kind: "search" }>): Promise<AgentToolResult<QueryDetails>> {
  const findings = await searchArchive({ state: scope.state, editedOutputs: scope.edited, runner: runtime.runner.get(), blobDir: scope.blobDir }, searchRequestOf(request));
  return { content: [{ type: "text", text: searchText(request.pattern, findings, request.hasImages) }], details: { search: searchJson(findings) } };
}

/**
 * The tool's result for a list of refs; throws when any ref is unknown. An output a context edit
 * changed is returned as edited, without its parts. Images are attached after the text, in call
 * order, while the call's budget lasts. `only`: given parts of the one ref, without its text.
 */
export async function queryArchive(
  state: PruneState,
  inputs: readonly string[],
  blobDir: string | undefined,
  edited: ReadonlyMap<string, EditedOutput> = new Map(),
  only?: readonly number[],
): Promise<AgentToolResult<QueryDetails>> {
  const found = inputs.map((input) => ({ input, matches: findRecords(state, input) }));
  const unknown = found.filter((item) => item.matches.length === 0).map((item) => item.input);
  if (unknown.length > 0) {
    const known = found.length - unknown.length;
    throw new Error(`unknown ref${unknown.length === 1 ? "" : "s"}: ${unknown.join(", ")} (not found in the archive \u2014 may not have been compressed yet)${known > 0 ? `; ask again without ${unknown.length === 1 ? "it" : "them"} to get the other ${known}` : ""}`);
  }
  const call = callParts(edited, await loadHasher(), blobDir);
  const texts: string[] = [];
  for (const { input, matches } of found) {
    if (only !== undefined) assertOneOutput(input, matches);
    const bodies = only === undefined ? await bodiesOf(matches, blobDir, edited) : [];
    const parts: QueriedParts[] = [];
    for (const match of matches) {
      const got = await call.of(match.record, only);
      if (only !== undefined) assertPartsExist(match.label, got.total, only);
      parts.push(got);
    }
    texts.push(formatQueryResult(input, matches, bodies.map((b) => b.text), { problems: bodies.map((b) => b.problem), parts, ...(only === undefined ? {} : { partsOnly: true }) }));
  }
  return {
    content: [{ type: "text", text: texts.join(QUERY_BLOCK_SEPARATOR) }, ...call.images],
    details: queryDetails(found.flatMap((item) => item.matches)),
  };
}

function assertOneOutput(input: string, matches: readonly QueryMatch[]): void {
  if (matches.length > 1) throw new Error(`${input} names ${matches.length} outputs; ask for parts of one of them: ${matches.map((m) => m.label).join(", ")}`);
}

function assertPartsExist(label: string, total: number, only: readonly number[]): void {
  const missing = only.filter((n) => n > total);
  if (missing.length === 0) return;
  const has = total === 0 ? "has no parts besides its text" : `has ${total} part${total === 1 ? "" : "s"} besides its text (1 to ${total})`;
  throw new Error(`${label} ${has}; part${missing.length === 1 ? "" : "s"} ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} none of them`);
}

/** Full bodies; a missing or damaged spill file falls back to the record's preview (upstream's rule). */
async function bodiesOf(matches: readonly QueryMatch[], blobDir: string | undefined, edited: ReadonlyMap<string, EditedOutput>): Promise<Array<{ text: string; problem?: string }>> {
  const hasher = await loadHasher();
  const bodies: Array<{ text: string; problem?: string }> = [];
  for (const match of matches) {
    const body = await readRecordText(match.record, edited, hasher, blobDir);
    bodies.push(body.ok ? { text: body.text } : { text: `${unavailableSpillBody(match.record)}\n[${body.detail}]`, problem: body.detail });
  }
  return bodies;
}
