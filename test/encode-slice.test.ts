// A chain's slice is encoded for its worker in the main thread's slices (main/encode-slice.ts,
// main/cooperative.ts): inside pi that thread is pi's UI, and the encoding must neither hold it for
// longer than a slice nor share a turn of the event loop with another loop's slice. Each message
// below spins for a fixed time whenever the encoder reads it, so the work done in one turn can
// only be smaller on a slow machine, never larger.

import { performance } from "node:perf_hooks";
import { unpackMultiple } from "msgpackr";
import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../src/core/session-types.js";
import { pauseIfDue, SLICE_MS } from "../src/main/cooperative.js";
import { encodeSlice } from "../src/main/encode-slice.js";

function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: the cost of reading one message
  }
}

const READ_MS = SLICE_MS / 8;

/** A message whose `text` costs READ_MS each time it is read, logged as "encode". */
function slowMessage(log: string[], i: number): AgentMessage {
  const message = { role: "user", timestamp: i } as Record<string, unknown>;
  Object.defineProperty(message, "content", {
    enumerable: true,
    get: () => {
      log.push("encode");
      spin(READ_MS);
      return `message ${i}`;
    },
  });
  return message as unknown as AgentMessage;
}

/** The most milliseconds of logged work between two turns of the event loop. */
function mostWorkInOneTurn(log: readonly string[], costs: Record<string, number>): number {
  let most = 0;
  let turn = 0;
  for (const event of log) {
    turn = event === "turn" ? 0 : turn + costs[event]!;
    most = Math.max(most, turn);
  }
  return most;
}

describe("encodeSlice", () => {
  it("encodes in the thread's slices: with another loop running, no turn holds more than a slice of both", async () => {
    const log: string[] = [];
    const messages = Array.from({ length: 120 }, (_, i) => slowMessage(log, i));
    const loop = async () => {
      for (let i = 0; i < 40; i++) {
        await pauseIfDue();
        log.push("step");
        spin(READ_MS);
      }
    };
    let running = true;
    const tick = () => {
      log.push("turn");
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const [encoded] = await Promise.all([encodeSlice(messages), loop()]);
    running = false;
    // A turn starts a slice, and work goes on until a check finds it used up: the encoder checks
    // after each message (read twice: checked, then packed), so at most one message over.
    expect(mostWorkInOneTurn(log, { encode: READ_MS, step: READ_MS })).toBeLessThanOrEqual(SLICE_MS + 2 * READ_MS);
    expect(log.filter((event) => event === "step")).toHaveLength(40);
    // And it is the slice still: every message, in order.
    const decoded = encoded!.chunks.flatMap((chunk) => unpackMultiple(chunk) as Array<{ timestamp: number; content: string }>);
    expect(decoded.map((message) => message.timestamp)).toEqual(messages.map((_, i) => i));
    expect(decoded[7]!.content).toBe("message 7");
  });
});
