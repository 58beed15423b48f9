/**
 * The records of a file-path chain task, as the main thread keeps them: made here from the planned
 * outputs of its own messages (the call's args, the result's text) and the few facts only the
 * worker knows (a spilled output's fields, the text of an output made of several text parts, the
 * content hash and spilled parts of an output with non-text parts), so
 * the worker need not send the records themselves. From a lightened model (`chainpress compact`)
 * they are the records the worker archived, lightened: the model was lightened by the same rules,
 * key for key (core/light-value.ts). From pi's whole messages (`/pruner compact`) they are the
 * worker's records exactly, and share pi's strings.
 */

import { mergeArchivedParts } from "../core/archived-parts.js";
import { buildBackfilledRecord } from "../core/chain-entry.js";
import { outputFields, type SpanOutput } from "../core/extract-records.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import type { ChainTaskResult } from "../workers/chain-task.js";

export function fileTaskRecords(outputs: readonly SpanOutput[], result: ChainTaskResult): ToolCallRecord[] {
  if (result.kind !== "facts") throw new Error(`internal error: a file-slice task sent ${result.kind}, not facts`);
  const { archived } = result;
  if (archived.length !== outputs.length) throw new Error(`internal error: ${archived.length} archived outputs for ${outputs.length} planned`);
  return outputs.map((output, i) => {
    const facts = archived[i];
    const fields = outputFields(output);
    const parts = facts?.parts && { contentHash: facts.parts.contentHash, parts: mergeArchivedParts(output.result.content, facts.parts.spilled) };
    if (facts?.spill) return buildBackfilledRecord(fields, facts.spill, parts);
    return buildBackfilledRecord(facts?.resultText === undefined ? fields : { ...fields, resultText: facts.resultText }, undefined, parts);
  });
}
