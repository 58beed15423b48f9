/**
 * Span resolution (reference §4.4), fail-closed: a chain's span is found only when exactly one
 * user message carries its start timestamp and exactly one assistant message its final timestamp.
 * The index is built once per message array so each lookup is O(1), not a scan per chain.
 */

import type { AgentMessage } from "./session-types.js";
import { runSteps, stepDue, type Steps } from "./steps.js";

export interface ResolvedSpan {
  /** Index of the opening user message. */
  startIndex: number;
  /** Index of the closing assistant message. */
  endIndex: number;
}

/** The two timestamps that identify a span (a ChainRange or a persisted chain entry). */
export interface SpanBoundary {
  startUserTimestamp: number;
  finalAssistantTimestamp: number | null;
}

/** Position of a timestamp among messages of one role, or DUPLICATE when it occurs more than once. */
const DUPLICATE = -1;

export class SpanIndex {
  private readonly userAt = new Map<number, number>();
  private readonly assistantAt = new Map<number, number>();

  constructor(
    readonly messages: readonly AgentMessage[],
    indexNow = true,
  ) {
    if (indexNow) runSteps(this.fill());
  }

  /** The index, built pausably (core/steps.ts). */
  static *steps(messages: readonly AgentMessage[]): Steps<SpanIndex> {
    const index = new SpanIndex(messages, false);
    yield* index.fill();
    return index;
  }

  private *fill(): Steps<void> {
    for (let index = 0; index < this.messages.length; index++) {
      if (stepDue(index)) yield;
      const message = this.messages[index]!;
      if (typeof message.timestamp !== "number" || Number.isNaN(message.timestamp)) continue;
      if (message.role === "user") record(this.userAt, message.timestamp, index);
      else if (message.role === "assistant") record(this.assistantAt, message.timestamp, index);
    }
  }

  /** The span, or null when a boundary is missing, duplicated, or out of order. */
  resolve(boundary: SpanBoundary): ResolvedSpan | null {
    if (boundary.finalAssistantTimestamp === null) return null;
    const startIndex = this.userAt.get(boundary.startUserTimestamp);
    const endIndex = this.assistantAt.get(boundary.finalAssistantTimestamp);
    if (startIndex === undefined || endIndex === undefined) return null;
    if (startIndex === DUPLICATE || endIndex === DUPLICATE) return null;
    return startIndex < endIndex ? { startIndex, endIndex } : null;
  }
}

function record(map: Map<number, number>, timestamp: number, index: number): void {
  map.set(timestamp, map.has(timestamp) ? DUPLICATE : index);
}
