/**
 * Span resolution (reference §4.4), fail-closed: a chain's span is found only when exactly one
 * user message carries its start timestamp and exactly one assistant message its final timestamp.
 * The index is built once per message array so each lookup is O(1), not a scan per chain. Given
 * the boundaries it will be asked for, it keeps only their timestamps: a session's assistant
 * messages far outnumber its chains, and the index is built for planning and for every render of
 * a session with compressed chains (pi's `context` event, once a turn).
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
  /** The timestamps kept, when the index was built for given boundaries only. */
  private wanted: { users: Set<number>; assistants: Set<number> } | undefined;

  /** `boundaries`: the only ones `resolve` will be asked for (default: any). */
  constructor(
    readonly messages: readonly AgentMessage[],
    indexNow = true,
    boundaries?: Iterable<SpanBoundary>,
  ) {
    this.wanted = boundaries && runSteps(wantedTimestamps(boundaries));
    if (indexNow) runSteps(this.fill());
  }

  /** The index, built pausably (core/steps.ts); `boundaries` as for the constructor. */
  static *steps(messages: readonly AgentMessage[], boundaries?: Iterable<SpanBoundary>): Steps<SpanIndex> {
    const index = new SpanIndex(messages, false);
    // Thousands of chains are thousands of boundaries: collected in slices too.
    index.wanted = boundaries && (yield* wantedTimestamps(boundaries));
    yield* index.fill();
    return index;
  }

  private *fill(): Steps<void> {
    const wanted = this.wanted;
    for (let index = 0; index < this.messages.length; index++) {
      if (stepDue(index)) yield;
      const message = this.messages[index]!;
      if (typeof message.timestamp !== "number" || Number.isNaN(message.timestamp)) continue;
      if (message.role === "user") {
        if (!wanted || wanted.users.has(message.timestamp)) record(this.userAt, message.timestamp, index);
      } else if (message.role === "assistant") {
        if (!wanted || wanted.assistants.has(message.timestamp)) record(this.assistantAt, message.timestamp, index);
      }
    }
  }

  /** The span, or null when a boundary is missing, duplicated, or out of order. */
  resolve(boundary: SpanBoundary): ResolvedSpan | null {
    if (boundary.finalAssistantTimestamp === null) return null;
    const indexed = !this.wanted || (this.wanted.users.has(boundary.startUserTimestamp) && this.wanted.assistants.has(boundary.finalAssistantTimestamp));
    // A boundary the index was not built for (a chain registered while a render was paused) is
    // looked for in the messages: the same answer, at the cost of a pass over them.
    const startIndex = indexed ? this.userAt.get(boundary.startUserTimestamp) : this.scan("user", boundary.startUserTimestamp);
    const endIndex = indexed ? this.assistantAt.get(boundary.finalAssistantTimestamp) : this.scan("assistant", boundary.finalAssistantTimestamp);
    if (startIndex === undefined || endIndex === undefined) return null;
    if (startIndex === DUPLICATE || endIndex === DUPLICATE) return null;
    return startIndex < endIndex ? { startIndex, endIndex } : null;
  }

  /** What the index would hold for a timestamp of a role: its position, DUPLICATE, or undefined. */
  private scan(role: "user" | "assistant", timestamp: number): number | undefined {
    const found = new Map<number, number>();
    this.messages.forEach((message, index) => {
      if (message.role === role && message.timestamp === timestamp) record(found, timestamp, index);
    });
    return found.get(timestamp);
  }
}

function* wantedTimestamps(boundaries: Iterable<SpanBoundary>): Steps<{ users: Set<number>; assistants: Set<number> }> {
  const users = new Set<number>();
  const assistants = new Set<number>();
  let count = 0;
  for (const boundary of boundaries) {
    if (stepDue(count++)) yield;
    if (boundary.finalAssistantTimestamp === null) continue;
    users.add(boundary.startUserTimestamp);
    assistants.add(boundary.finalAssistantTimestamp);
  }
  return { users, assistants };
}

function record(map: Map<number, number>, timestamp: number, index: number): void {
  map.set(timestamp, map.has(timestamp) ? DUPLICATE : index);
}
