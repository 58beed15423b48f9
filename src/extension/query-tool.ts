/**
 * The `context_tree_query` tool (reference §7): the model names archived outputs by short ref
 * (`t12`), bare tool-call id or occurrence key (`id@ts`) and gets the original bytes back, from
 * the archive record or its verified spill file. An unknown ref is an error, thrown as pi-agent-core
 * expects, so the model sees a failed call instead of an empty success.
 */

import type { AgentToolResult, ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { QUERY_TOOL_NAME } from "../core/custom-types.js";
import { editedRecordText, type EditedOutput } from "../core/context-edits.js";
import { loadHasher } from "../core/digest.js";
import type { PruneState } from "../core/prune-state.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import { findRecords, formatQueryResult, QUERY_BLOCK_SEPARATOR, queryDetails, unavailableSpillBody, type QueryMatch } from "../core/query.js";
import { resolveRecordBody } from "../io/read-spill.js";
import type { Chainpress } from "./runtime.js";
import { blobDirOf } from "./state-holder.js";

export const queryParameters = Type.Object({
  toolCallIds: Type.Array(Type.String(), {
    minItems: 1,
    description: "Refs of archived outputs: short refs like t12 (from <compressed-chain> tools=\"...\" or stubs), tool-call ids, or id@timestamp",
  }),
});

export type QueryDetails = { results: Record<string, ToolCallRecord> };

export function registerQueryTool(runtime: Chainpress, pi: ExtensionAPI): void {
  pi.registerTool({
    name: QUERY_TOOL_NAME,
    label: "Query Original Tool History",
    description:
      "Retrieve the original, full output of tool calls whose output was compressed or archived (compressed chains, stubs, spilled outputs). Pass the refs shown in the compressed context.",
    promptSnippet: "retrieve the full original output of compressed or archived tool calls by ref (tN), tool-call id or id@timestamp",
    parameters: queryParameters,
    execute: async (_toolCallId, params, _signal, _onUpdate, ctx) =>
      queryArchive(runtime.holder.state, params.toolCallIds, ctx ? blobDirOf(ctx.sessionManager) : undefined, ctx ? runtime.holder.edits.editedOutputs(ctx.sessionManager) : undefined),
  });
}

/** The tool's result for a list of refs; throws when any ref is unknown. An output a context edit changed is returned as edited. */
export async function queryArchive(state: PruneState, inputs: readonly string[], blobDir?: string, edited: ReadonlyMap<string, EditedOutput> = new Map()): Promise<AgentToolResult<QueryDetails>> {
  const found = inputs.map((input) => ({ input, matches: findRecords(state, input) }));
  const unknown = found.filter((item) => item.matches.length === 0).map((item) => item.input);
  if (unknown.length > 0) {
    const known = found.length - unknown.length;
    throw new Error(`unknown ref${unknown.length === 1 ? "" : "s"}: ${unknown.join(", ")} (not found in the archive \u2014 may not have been compressed yet)${known > 0 ? `; ask again without ${unknown.length === 1 ? "it" : "them"} to get the other ${known}` : ""}`);
  }
  const texts: string[] = [];
  for (const { input, matches } of found) {
    const bodies = await bodiesOf(matches, blobDir, edited);
    texts.push(formatQueryResult(input, matches, bodies.map((b) => b.text), { problems: bodies.map((b) => b.problem) }));
  }
  return {
    content: [{ type: "text", text: texts.join(QUERY_BLOCK_SEPARATOR) }],
    details: queryDetails(found.flatMap((item) => item.matches)),
  };
}

/** Full bodies; a missing or damaged spill file falls back to the record's preview (upstream's rule). */
async function bodiesOf(matches: readonly QueryMatch[], blobDir: string | undefined, edited: ReadonlyMap<string, EditedOutput>): Promise<Array<{ text: string; problem?: string }>> {
  const hasher = await loadHasher();
  const bodies: Array<{ text: string; problem?: string }> = [];
  for (const match of matches) {
    const editedText = editedRecordText(match.record, edited);
    if (editedText !== undefined) {
      bodies.push({ text: editedText });
      continue;
    }
    const body = await resolveRecordBody(match.record, hasher, blobDir);
    bodies.push(body.ok ? { text: body.text } : { text: `${unavailableSpillBody(match.record)}\n[${body.detail}]`, problem: body.detail });
  }
  return bodies;
}
