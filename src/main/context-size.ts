/**
 * Size of what the model would see for a session: pi's context messages after chainpress's
 * rendering, measured as JSON characters (upstream estimates tokens as chars / 4). On a
 * lightened model (the file path) the lengths come from the scan and from placeholders
 * (core/light-value.ts), so the measure is the real one without the real bytes.
 */

import { realJsonLength } from "../core/light-value.js";
import { pruneMessages, pruneMessagesSteps, type PruneOptions } from "../core/render/prune-messages.js";
import { contextMessages, contextMessagesSteps } from "../core/session-tree.js";
import { runSteps, stepDue, type Steps } from "../core/steps.js";
import { driveSteps } from "./cooperative.js";
import type { AgentMessage } from "../core/session-types.js";
import type { SessionModel } from "./session-model.js";

export interface ContextSize {
  messages: number;
  chars: number;
}

/** Render the model's context with the model's current state. */
export function renderContext(model: SessionModel, options: PruneOptions = {}): AgentMessage[] {
  return pruneMessages(contextMessages(model.branch), model.state, options).messages;
}

/**
 * JSON length per message object that the scan did not measure. Rendering returns untouched
 * messages as the same objects, so the "after" measure of a compaction only serialises what
 * changed. Scanned messages are not cached: their length is a lookup already, and a cache of
 * every message cost ~10 MB at 200x1M and, growing, rehashed all its entries in one step (a
 * 20 ms stall there, measured).
 */
const lengthOf = new WeakMap<object, number>();

export function measureContext(model: SessionModel, options: PruneOptions = {}): ContextSize {
  return runSteps(measureSteps(model, options));
}

/** measureContext in slices, handing the event loop a turn every few milliseconds (compaction on a shared thread). */
export function measureContextCooperatively(model: SessionModel, options: PruneOptions = {}): Promise<ContextSize> {
  return driveSteps(measureSteps(model, options));
}

function* measureSteps(model: SessionModel, options: PruneOptions): Steps<ContextSize> {
  // Only the messages count here: the render's diagnostics are dropped, so it need not look for them.
  const render = { ...options, checkRecordedIds: false };
  const messages = (yield* pruneMessagesSteps(yield* contextMessagesSteps(model.branch), model.state, render)).messages;
  let chars = 0;
  // Per message, so a 200 MB session never becomes one giant string.
  for (let index = 0; index < messages.length; index++) {
    if (stepDue(index)) yield;
    const message = messages[index]!;
    let length = model.scannedCharsOf(message) ?? lengthOf.get(message);
    if (length === undefined) {
      length = realJsonLength(message);
      lengthOf.set(message, length);
      // A rendered message (a chain's synthetic one carries its whole body) is serialised here:
      // 620 of them at 200x1M took 17 ms, one step of the count below.
      yield;
    }
    chars += length;
  }
  return { messages: messages.length, chars };
}
