/**
 * The stub of an output archived by a backfill (open-chain archiving, issue 13, or a closed chain
 * whose chain entry is not written yet). No per-batch summary exists for such an output, so
 * upstream's "Summarized in pruner summary" would be false: this stub says what the output was
 * (tool, its target as the archive map names it, size) and how to get it back. Built from the record alone, so every render
 * gives the same bytes and the prompt cache stays valid. An output with images says so, and what
 * they are (core/part-notes.ts); a text-only output's stub has no such sentence.
 */

import { callTarget } from "../call-target.js";
import { argsExcerpt } from "../deterministic-body.js";
import { estimateTokens } from "../open-chain-policy.js";
import { partsNoteOf, partsNoteText } from "../part-notes.js";
import type { ToolCallRecord } from "../prune-types.js";

/** The fields of a record the stub reads. */
export type StubRecord = Pick<ToolCallRecord, "toolName" | "args" | "resultText" | "spillBytes" | "parts">;

/** `textTokens`: estimateTokens(record.resultText), where the caller has it already. */
export function archivedOutputStubText(record: StubRecord, ref: string, spillPath?: string, textTokens?: number): string {
  const size = record.spillBytes !== undefined ? `${record.spillBytes} bytes` : `~${textTokens ?? estimateTokens(record.resultText)} tokens`;
  // The call named as the archive map names it; args without a recognisable target as JSON.
  const what = callTarget(record.args) || argsExcerpt(record.args);
  const head = `[Archived output of ${record.toolName}${what === "" ? "" : ` ${what}`} (${size}), ref \`${ref}\`: not shown to keep the context small.`;
  const note = partsNoteOf(record.parts);
  const held = note === undefined ? "" : ` It held ${partsNoteText(note)}.`;
  const file = spillPath === undefined ? "" : ` It is also in the file ${spillPath}.`;
  return `${head}${held} context_tree_query with ref \`${ref}\` returns it verbatim.${file}]`;
}
