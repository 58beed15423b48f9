/**
 * Record extraction for the deterministic path (reference §4.5). One walker serves both the main
 * thread (planning which occurrences a chain will archive, to reserve their refs) and the worker
 * (building the records), so the two can never disagree about which outputs are taken.
 */

import { contentText, extractionArgs, toolCallParts } from "./message-text.js";
import { occurrenceKey } from "./occurrence-key.js";
import type { AgentMessage, ToolCallPart, ToolResultMessage } from "./session-types.js";

/**
 * One extractable output found in a span: its key, and the call and the result as the span's
 * messages hold them (a plan keeps its outputs until its chain's work is back, so an object per
 * call made here would outlive young collections).
 */
export interface SpanOutput {
  key: string;
  call: ToolCallPart;
  result: ToolResultMessage;
}

/**
 * Walk the messages strictly inside a resolved span (pass the slice between the boundaries) and
 * yield every output that is opened by a call in the span, not protected, has a numeric timestamp
 * and is not skipped by `skip(key)`. `keyOf` gives each output's occurrence key (a planner passes
 * one that returns the chain's own copies of those strings).
 */
export function* spanOutputs(
  inner: readonly AgentMessage[],
  protectedIds: ReadonlySet<string>,
  skip: (key: string) => boolean,
  keyOf: (toolCallId: string, resultTimestamp: number) => string = occurrenceKey,
): Generator<SpanOutput> {
  const calls = new Map<string, ToolCallPart>();
  for (const message of inner) {
    if (message.role === "assistant") {
      for (const call of toolCallParts(message)) {
        // Same rule as detection: an output must be keyable and archivable to be extracted.
        if (typeof call.id === "string" && call.id !== "" && typeof call.name === "string") calls.set(call.id, call);
      }
      continue;
    }
    if (message.role !== "toolResult") continue;
    const result = message as ToolResultMessage;
    if (typeof result.toolCallId !== "string") continue;
    const call = calls.get(result.toolCallId);
    if (!call || protectedIds.has(result.toolCallId) || typeof result.timestamp !== "number") continue;
    const key = keyOf(result.toolCallId, result.timestamp);
    if (!skip(key)) yield { key, call, result };
  }
}

/** The full-text fields of a backfilled record for one output. */
export function outputFields(output: SpanOutput) {
  return {
    toolCallId: output.result.toolCallId,
    toolName: output.call.name,
    args: extractionArgs(output.call),
    resultText: contentText(output.result.content),
    isError: output.result.isError === true,
    resultTimestamp: output.result.timestamp,
  };
}
