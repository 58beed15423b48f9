/**
 * The records of a file-path chain task, as the main thread keeps them: lightened, and made here
 * from the planned outputs of the lightened model (the call's lightened args, the result's
 * lightened text) and the few facts only the worker knows (a spilled output's fields, the text of
 * an output made of several text parts). They are the records the worker archived, lightened:
 * the model was lightened by the same rules, key for key (core/light-value.ts), and the worker
 * need not lighten, nor send, the records themselves.
 */

import { buildBackfilledRecord } from "../core/chain-entry.js";
import { outputFields, type SpanOutput } from "../core/extract-records.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import type { ArchivedFacts } from "../workers/chain-task.js";

export function lightRecords(outputs: readonly SpanOutput[], archived: ReadonlyArray<ArchivedFacts | undefined>): ToolCallRecord[] {
  if (archived.length !== outputs.length) throw new Error(`internal error: ${archived.length} archived outputs for ${outputs.length} planned`);
  return outputs.map((output, i) => {
    const facts = archived[i];
    const fields = outputFields(output);
    if (facts?.spill) return buildBackfilledRecord(fields, facts.spill);
    return buildBackfilledRecord(facts?.lightText === undefined ? fields : { ...fields, resultText: facts.lightText });
  });
}
