/**
 * msgpackr encoding of a chain's message slice for its worker, done cooperatively: one message
 * at a time, in the thread's slices (main/cooperative.ts), so a megabyte chain never blocks
 * the main thread (pi's UI in the extension) for long. Yielding by a clock of its own, with a
 * bare setImmediate, let a slice of encoding share a turn with another loop's slice or with one
 * of pi's writes, a longer stall inside pi. Each message
 * is checked just before it is encoded; the encodings are joined into chunks of about
 * CHUNK_BYTES (a big output is a chunk of its own, never copied again), which the worker reads
 * with `unpackMultiple`. One join of the whole slice, or one deep check of it before encoding,
 * would hold pi's UI for as long as a megabyte chain takes (bench:pi).
 */

import { performance } from "node:perf_hooks";
import type { AgentMessage } from "../core/session-types.js";
import { loadMsgpack, messageCarrier } from "../io/msgpack-codec.js";
import { pauseIfDue, sliceUsedUp } from "./cooperative.js";

/** Encodings joined per chunk: small enough to copy within a slice, big enough to keep the transfer list short. */
const CHUNK_BYTES = 256 * 1024;

export interface EncodedSlice {
  /** Chunks with buffers of their own (transferable), the messages' encodings back to back. */
  chunks: Uint8Array[];
  /** Main-thread time spent encoding, yields excluded. */
  busyMs: number;
}

/**
 * The slice encoded, or how else to send it when msgpack would not carry a message
 * (io/msgpack-codec.ts messageCarrier): "clone" (structured clone, for a lone surrogate or a
 * `__proto__` key) or "json" (JSON text, for a message nested too deep for either).
 */
export async function encodeSlice(messages: readonly AgentMessage[]): Promise<EncodedSlice | "clone" | "json"> {
  const { pack } = await loadMsgpack();
  const chunks: Uint8Array[] = [];
  let batch: Uint8Array[] = [];
  let batchBytes = 0;
  let busyMs = 0;
  await pauseIfDue();
  let stretch = performance.now();
  for (const message of messages) {
    const carrier = messageCarrier(message);
    if (carrier !== "msgpack") return carrier === "json" ? "json" : anyDeeper(messages);
    // pack() returns a view of a reused buffer: copy before the next call.
    const part = Uint8Array.prototype.slice.call(pack(message));
    batch.push(part);
    batchBytes += part.length;
    if (batchBytes >= CHUNK_BYTES) {
      chunks.push(join(batch, batchBytes));
      batch = [];
      batchBytes = 0;
    }
    if (sliceUsedUp()) {
      busyMs += performance.now() - stretch;
      await pauseIfDue();
      stretch = performance.now();
    }
  }
  if (batch.length > 0) chunks.push(join(batch, batchBytes));
  busyMs += performance.now() - stretch;
  return { chunks, busyMs };
}

/** "json" when some message needs JSON text (structured clone cannot carry it either), else "clone". */
function anyDeeper(messages: readonly AgentMessage[]): "clone" | "json" {
  return messages.some((message) => messageCarrier(message) === "json") ? "json" : "clone";
}

function join(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.length;
  }
  return bytes;
}
