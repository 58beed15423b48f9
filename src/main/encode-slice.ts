/**
 * msgpackr encoding of a chain's message slice for its worker, done cooperatively: one message
 * at a time, yielding to the event loop every few milliseconds, so a megabyte chain never blocks
 * the main thread (pi's UI in the extension) for long. The worker reads the concatenation with
 * `unpackMultiple`.
 */

import { performance } from "node:perf_hooks";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { pack } from "msgpackr";
import type { AgentMessage } from "../core/session-types.js";

/** Longest stretch of encoding between two yields. */
export const ENCODE_SLICE_BUDGET_MS = 4;

export interface EncodedSlice {
  /** Own buffer (transferable), the messages' encodings back to back. */
  bytes: Uint8Array;
  /** Main-thread time spent encoding, yields excluded. */
  busyMs: number;
}

export async function encodeSlice(messages: readonly AgentMessage[]): Promise<EncodedSlice> {
  const parts: Uint8Array[] = [];
  let total = 0;
  let busyMs = 0;
  let stretch = performance.now();
  for (const message of messages) {
    // pack() returns a view of a reused buffer: copy before the next call.
    const part = Uint8Array.prototype.slice.call(pack(message));
    parts.push(part);
    total += part.length;
    const now = performance.now();
    if (now - stretch >= ENCODE_SLICE_BUDGET_MS) {
      busyMs += now - stretch;
      await yieldToLoop();
      stretch = performance.now();
    }
  }
  busyMs += performance.now() - stretch;
  return { bytes: concat(parts, total), busyMs };
}

function concat(parts: Uint8Array[], total: number): Uint8Array {
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.length;
  }
  return bytes;
}
