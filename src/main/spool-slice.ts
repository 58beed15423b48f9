/**
 * A planned span as the scan spooled it (io/spool.ts): for each output the plan archives, where
 * its call's args and its text lie in the spool, with the small fields the lightened model holds
 * exactly. Undefined when any of it was not spooled (a glued line, a scan without a spool): the
 * caller then sends the span's lines instead (main/file-slice.ts).
 */

import { spanOutputs } from "../core/extract-records.js";
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
    const callSpool = spoolOf(model, output.call.message);
    const resultSpool = spoolOf(model, output.result);
    const partIndex = (output.call.message.content as unknown[]).indexOf(output.call.part);
    const args = callSpool?.calls?.find((call) => call.part === partIndex)?.args;
    const result = resultSpool?.result;
    const bulk = result?.spill?.bytes ?? result?.json;
    if (!callSpool || !args || !result || !bulk) return undefined;
    const spooled: SpooledOutput = {
      toolCallId: output.result.toolCallId,
      toolName: output.call.name,
      isError: output.result.isError === true,
      resultTimestamp: output.result.timestamp,
      args: { shard: callSpool.shard, ...args },
      bulk: { shard: resultSpool.shard, ...bulk },
      chars: result.chars,
    };
    if (result.lightText !== undefined) spooled.lightText = result.lightText;
    if (result.spill) {
      const { bytes: _bytes, ...spill } = result.spill;
      spooled.spill = spill;
    }
    outputs.push(spooled);
  }
  return outputs.length === plannedKeys.length ? { dir, outputs } : undefined;
}

function spoolOf(model: SessionModel, message: AgentMessage) {
  const entry = model.entryOf(message);
  return entry ? model.loaded.locationOf(entry)?.spool : undefined;
}
