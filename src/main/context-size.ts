/**
 * Size of what the model would see for a session: pi's context messages after chainpress's
 * rendering, counted in JSON characters (upstream estimates tokens as chars / 4), an image's
 * data counted as billed instead (core/billed-size.ts). On a lightened model (the file path) the
 * lengths come from the scan and from placeholders (core/light-placeholder.ts), and a lightened
 * image keeps its header, so the measure is the real one without the real bytes.
 */

import { addTally, emptyTally, imageBillOf, type ImageTally } from "../core/billed-size.js";
import { realJsonLength } from "../core/light-placeholder.js";
import { pruneMessages, pruneMessagesSteps, type PruneOptions } from "../core/render/prune-messages.js";
import { contextMessages, contextMessagesSteps } from "../core/session-tree.js";
import { runSteps, stepDue, type Steps } from "../core/steps.js";
import { driveSteps } from "./cooperative.js";
import type { AgentMessage } from "../core/session-types.js";
import type { SessionModel } from "./session-model.js";

export interface ContextSize {
  messages: number;
  /** JSON characters, each image's data counted as its billed tokens × 4. */
  chars: number;
  /** The images counted, and by which rule. */
  images: ImageTally;
}

/** Render the model's context with the model's current state. */
export function renderContext(model: SessionModel, options: PruneOptions = {}): AgentMessage[] {
  return pruneMessages(contextMessages(model.branch, model.edits), model.state, { ...options, editedOutputs: model.editedOutputs }).messages;
}

/**
 * JSON length per message object that the scan did not measure, kept by the caller from one
 * measure of a model to the next. Rendering returns untouched messages as the same objects, so the
 * "after" measure of a compaction only serialises what changed. Scanned messages are not kept:
 * their length is a lookup already, and a map of every message is large and, growing, rehashes all
 * its entries in one step, a stall.
 */
export type MessageLengths = WeakMap<object, number>;

export function measureContext(model: SessionModel, options: PruneOptions = {}, lengths: MessageLengths = new WeakMap()): ContextSize {
  return runSteps(measureSteps(model, options, lengths));
}

/** measureContext in slices, handing the event loop a turn every few milliseconds (compaction on a shared thread). */
export function measureContextCooperatively(model: SessionModel, options: PruneOptions = {}, lengths: MessageLengths = new WeakMap()): Promise<ContextSize> {
  return driveSteps(measureSteps(model, options, lengths));
}

function* measureSteps(model: SessionModel, options: PruneOptions, lengths: MessageLengths): Steps<ContextSize> {
  // Only the messages count here: the render's diagnostics are dropped, so it need not look for them.
  const render = { ...options, checkRecordedIds: false, editedOutputs: model.editedOutputs };
  const slots = new Int32Array(model.branch.length + 2);
  const context = yield* contextMessagesSteps(model.branch, slots, model.edits);
  const messages = (yield* pruneMessagesSteps(context, model.state, render)).messages;
  // A message of the context is sized from its slot in the branch, where the scan's length of
  // it waits; one the render made, by serialising it. The render keeps each message it does not
  // replace as the same object, so a count of what it returned tells the two apart, and is small
  // once chains are compressed (a render that changes nothing returns the context itself).
  const rendered = messages === context ? undefined : yield* timesEachSteps(messages);
  let chars = 0;
  const images = emptyTally();
  const add = (message: AgentMessage, times: number, length: number): void => {
    const bill = imageBillOf(message);
    chars += times * (length + bill.delta);
    if (bill.tally.count > 0) addTally(images, bill.tally, times);
  };
  // Per message, so a large session never becomes one giant string.
  for (let k = 0; k < context.length; k++) {
    if (stepDue(k)) yield;
    const message = context[k]!;
    const times = rendered === undefined ? 1 : (rendered.get(message) ?? 0);
    if (times === 0) continue;
    rendered?.delete(message);
    add(message, times, model.scannedCharsAt(slots[k]!) ?? (yield* madeLength(message, lengths)));
  }
  if (rendered !== undefined) for (const [message, times] of rendered) add(message, times, yield* madeLength(message, lengths));
  return { messages: messages.length, chars, images };
}

/** How many times each message object is in the list. */
function* timesEachSteps(messages: readonly AgentMessage[]): Steps<Map<AgentMessage, number>> {
  const times = new Map<AgentMessage, number>();
  for (let index = 0; index < messages.length; index++) {
    if (stepDue(index)) yield;
    const message = messages[index]!;
    times.set(message, (times.get(message) ?? 0) + 1);
  }
  return times;
}

/** The JSON length of a message the scan did not measure, kept in `lengths` (see MessageLengths). */
function* madeLength(message: AgentMessage, lengths: MessageLengths): Steps<number> {
  let length = lengths.get(message);
  if (length === undefined) {
    length = realJsonLength(message);
    lengths.set(message, length);
    // A rendered message (a chain's synthetic one carries its whole body) is serialised here, and
    // is a step of the count of its own.
    yield;
  }
  return length;
}
