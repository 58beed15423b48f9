/**
 * Token counts calibrated on the session itself. Requests are taken in order; the prompt tokens a
 * billed request recorded, less what its context's messages already count, are the tokens of the
 * messages it sends for the first time (those appended since the request before, or a
 * compaction's summary), split by their share of characters. The system prompt and tools, which
 * are in no message, are the `base`: the first request with usage's prompt less its messages'
 * estimate (0 when no request recorded usage). Where the recording cannot tell (no usage, a model
 * change, a prompt smaller than what is known, growth with no new message), the new messages keep
 * pi's estimate (chars / 4). Pure; it sets the table's calibrated counts.
 */

import type { ContextRef } from "./context-store.js";
import type { Recording } from "./recording.js";

/** Why a request's new messages were estimated rather than calibrated. */
export type EstimateReason = "first-request" | "no-usage" | "model-change" | "prompt-shrank" | "no-new-messages";

export interface Calibration {
  /** Tokens of the system prompt and tools, in every prompt. */
  base: number;
  /** Billed requests whose new messages were estimated, and why (the first request's are, by definition). */
  estimated: { request: number; reason: EstimateReason }[];
  /** Messages of the recording calibrated, and estimated. */
  calibratedMessages: number;
  estimatedMessages: number;
}

export function calibrate(recording: Recording): Calibration {
  const { table, requests, contexts } = recording;
  const seen = new Uint8Array(table.size);
  const calibration: Calibration = { base: 0, estimated: [], calibratedMessages: 0, estimatedMessages: 0 };
  let previous: { context: ContextRef; known: number; model: string } | undefined;
  let baseSet = false;
  for (const request of requests) {
    if (!request.billed) continue;
    const context = contexts[request.index]!;
    const { known, fresh } = split(context, previous?.context, previous?.known ?? 0, seen, table.tokensOf.bind(table));
    const freshChars = fresh.reduce((sum, id) => sum + table.charsOf(id), 0);
    const growth = request.promptTokens - calibration.base - known;
    const reason = !request.recorded ? "no-usage" : !baseSet ? "first-request" : reasonToEstimate(previous?.model, request.model, growth, fresh.length);
    if (reason === undefined) {
      for (const id of fresh) table.calibrate(id, freshChars === 0 ? growth / fresh.length : (growth * table.charsOf(id)) / freshChars);
      calibration.calibratedMessages += fresh.length;
    } else {
      calibration.estimated.push({ request: request.index, reason });
      calibration.estimatedMessages += fresh.length;
    }
    const freshTokens = fresh.reduce((sum, id) => sum + table.tokensOf(id), 0);
    if (!baseSet && request.recorded) {
      calibration.base = Math.max(0, request.promptTokens - known - freshTokens);
      baseSet = true;
    }
    previous = { context, known: known + freshTokens, model: request.model };
  }
  return calibration;
}

function reasonToEstimate(previousModel: string | undefined, model: string, growth: number, fresh: number): EstimateReason | undefined {
  if (previousModel !== model) return "model-change";
  if (growth < 0) return "prompt-shrank";
  if (fresh === 0 && growth > 0) return "no-new-messages";
  return undefined;
}

/**
 * The tokens of a context's messages met before (`known`) and the ids met for the first time
 * (`fresh`, now marked seen). Past the prefix it shares with the previous context only the rest
 * is looked at; the known sum of that prefix is the previous one's when it is all of it.
 */
function split(context: ContextRef, previous: ContextRef | undefined, previousKnown: number, seen: Uint8Array, tokensOf: (id: number) => number): { known: number; fresh: number[] } {
  const ids = context.segment.ids;
  const extends_ = previous !== undefined && previous.segment === context.segment && previous.length <= context.length;
  let known = extends_ ? previousKnown : 0;
  const fresh: number[] = [];
  for (let k = extends_ ? previous.length : 0; k < context.length; k++) {
    const id = ids[k]!;
    if (seen[id] === 1) known += tokensOf(id);
    else {
      seen[id] = 1;
      fresh.push(id);
    }
  }
  return { known, fresh };
}
