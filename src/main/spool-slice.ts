/**
 * A planned span as the scan spooled it (io/spool.ts): for each output the plan archives, where
 * its call's args and its text lie in the spool, with the small fields the lightened model holds
 * exactly. Undefined when any of it was not spooled (a glued line, a scan without a spool): the
 * caller then sends the span's lines instead (main/file-slice.ts).
 */

import { spanOutputs } from "../core/extract-records.js";
import { contentText } from "../core/message-text.js";
import type { SpooledRun } from "../io/spool.js";
import type { AgentMessage } from "../core/session-types.js";
import type { ChainTask, SpooledOutput, SpoolSlice } from "../workers/chain-task.js";
import { fileSliceOf } from "./file-slice.js";
import type { DeterministicPlan } from "./plan-chains.js";
import type { SessionModel } from "./session-model.js";

/** Where a chain task gets its plan's bulk: the scan's spool, else the session's lines. */
export function taskSliceOf(model: SessionModel, plan: DeterministicPlan, spoolDir: string | undefined): Pick<ChainTask, "fileSlice" | "spoolSlice"> {
  const spoolSlice = spoolDir === undefined ? undefined : spoolSliceOf(model, spoolDir, plan.inner, plan.chain.protectedToolCallIds, plan.plannedKeys);
  return spoolSlice ? { spoolSlice } : { fileSlice: fileSliceOf(model, plan.inner) };
}

export function spoolSliceOf(model: SessionModel, dir: string, inner: readonly AgentMessage[], protectedIds: readonly string[], plannedKeys: readonly string[]): SpoolSlice | undefined {
  const wanted = new Set(plannedKeys);
  const outputs: SpooledOutput[] = [];
  for (const output of spanOutputs(inner, new Set(protectedIds), (key) => !wanted.has(key))) {
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
  return outputs.length === plannedKeys.length ? { dir, outputs } : undefined;
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
