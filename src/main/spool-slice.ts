/**
 * A planned span as the scan spooled it (io/spool.ts): for each output the plan archives, where
 * its call's args and its text lie in the spool, with the small fields the lightened model holds
 * exactly. Undefined when any of it was not spooled (a glued line, a scan without a spool): the
 * caller then sends the span's lines instead (main/file-slice.ts).
 */

import { spanOutputs, type SpanOutput } from "../core/extract-records.js";
import { contentText } from "../core/message-text.js";
import type { SpooledRun } from "../io/spool.js";
import type { AgentMessage } from "../core/session-types.js";
import type { ChainTask, SpooledOutput, SpoolSlice } from "../workers/chain-task.js";
import { fileSliceOf } from "./file-slice.js";
import type { DeterministicPlan } from "./plan-chains.js";
import type { SessionModel } from "./session-model.js";

/** Where a chain task gets its plan's bulk: the scan's spool, else the session's lines. */
export function taskSliceOf(model: SessionModel, plan: DeterministicPlan, spoolDir: string | undefined): Pick<ChainTask, "fileSlice" | "spoolSlice"> {
  const spoolSlice = spoolDir === undefined ? undefined : spoolSliceOf(model, spoolDir, plannedOutputs(plan), plan.plannedKeys.length);
  return spoolSlice ? { spoolSlice } : { fileSlice: fileSliceOf(model, plan.inner) };
}

/** The plan's outputs as planning found them, or found again (a plan made without them). */
function plannedOutputs(plan: DeterministicPlan): readonly SpanOutput[] {
  if (plan.outputs) return plan.outputs;
  const wanted = new Set(plan.plannedKeys);
  return [...spanOutputs(plan.inner, new Set(plan.chain.protectedToolCallIds), (key) => !wanted.has(key))];
}

export function spoolSliceOf(model: SessionModel, dir: string, planned: readonly SpanOutput[], plannedCount: number): SpoolSlice | undefined {
  const outputs: SpooledOutput[] = [];
  for (const output of planned) {
    const partIndex = (output.call.message.content as unknown[]).indexOf(output.call.part);
    const args = argsRun(spoolOf(model, output.call.message)?.calls, partIndex);
    const resultSpool = spoolOf(model, output.result);
    const result = resultSpool?.result;
    if (!args || !result) return undefined;
    const [shard, chars, offset, bytes] = result;
    const spooled: SpooledOutput = {
      toolCallId: output.result.toolCallId,
      toolName: output.call.name,
      isError: output.result.isError === true,
      resultTimestamp: output.result.timestamp,
      args,
      bulk: { shard, offset, bytes },
      chars,
    };
    if (resultSpool.spill) spooled.spill = resultSpool.spill;
    // The lightened message holds the record's light text, unless the scan said otherwise.
    else spooled.lightText = resultSpool.lightText ?? contentText(output.result.content);
    outputs.push(spooled);
  }
  return outputs.length === plannedCount ? { dir, outputs } : undefined;
}

/** The run of a call's args in an assistant entry's packed `calls` ([shard, then index, offset, bytes per call]). */
function argsRun(calls: readonly number[] | undefined, partIndex: number): SpooledRun | undefined {
  if (!calls) return undefined;
  for (let at = 1; at + 2 < calls.length; at += 3) {
    if (calls[at] === partIndex) return { shard: calls[0]!, offset: calls[at + 1]!, bytes: calls[at + 2]! };
  }
  return undefined;
}

function spoolOf(model: SessionModel, message: AgentMessage) {
  const entry = model.entryOf(message);
  return entry ? model.loaded.locationOf(entry)?.spool : undefined;
}
