// Main-thread loops give the event loop a turn once the thread's slice (SLICE_MS) is used up, and
// the slice belongs to the thread: loops that run one after another, or wait at the same time,
// must not each start a fresh one (main/cooperative.ts). Each step below spins for a fixed time,
// so the count of steps between two turns can only be smaller on a slow machine, never larger.

import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { driveSteps, endSlice, ownTurn, pauseIfDue, SLICE_MS } from "../src/main/cooperative.js";
import type { Steps } from "../src/core/steps.js";

function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: this is the work whose slices are measured
  }
}

/** Records "turn" whenever the event loop gets to a check phase, until stopped. */
function turnRecorder(log: string[]): () => void {
  let running = true;
  const tick = () => {
    log.push("turn");
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return () => {
    running = false;
  };
}

/** The longest run of work entries with no turn between them. */
function longestRunWithoutTurn(log: readonly string[]): number {
  let longest = 0;
  let run = 0;
  for (const event of log) {
    run = event === "turn" ? 0 : run + 1;
    longest = Math.max(longest, run);
  }
  return longest;
}

function* spinningSteps(log: string[], name: string, steps: number, ms: number): Steps<void> {
  for (let i = 0; i < steps; i++) {
    log.push(name);
    spin(ms);
    yield;
  }
}

describe("cooperative pauses", () => {
  it("loops that run one after another share the thread's slice", async () => {
    const log: string[] = [];
    const stepMs = SLICE_MS / 4;
    const stop = turnRecorder(log);
    // Five short loops in a row, each shorter than a slice: with a slice per loop, the thread
    // would run all five (10 steps) without a turn.
    for (let loop = 0; loop < 5; loop++) await driveSteps(spinningSteps(log, "step", 2, stepMs));
    stop();
    // A turn is due once SLICE_MS have passed, i.e. after at most 4 steps of SLICE_MS / 4.
    expect(longestRunWithoutTurn(log)).toBeLessThanOrEqual(4);
    expect(log.filter((e) => e === "step")).toHaveLength(10);
  });

  it("loops waiting at once take turns: one slice per turn of the event loop", async () => {
    const log: string[] = [];
    const loop = async (name: string) => {
      for (let i = 0; i < 3; i++) {
        await pauseIfDue();
        log.push(name);
        spin(SLICE_MS); // a whole slice
      }
    };
    spin(SLICE_MS); // the slice is used up: all three loops start by waiting for a turn
    const stop = turnRecorder(log);
    await Promise.all([loop("a"), loop("b"), loop("c")]);
    stop();
    // Each step uses up a slice, so no two steps may run in the same turn.
    expect(longestRunWithoutTurn(log)).toBe(1);
    expect(log.filter((e) => e !== "turn").sort()).toEqual(["a", "a", "a", "b", "b", "b", "c", "c", "c"]);
  });

  it("a call given its own turn shares it with no loop, and what follows it waits for the next", async () => {
    const log: string[] = [];
    // Steps of a quarter slice: the loop runs several of them in each turn it gets.
    const loop = async () => {
      for (let i = 0; i < 12; i++) {
        await pauseIfDue();
        log.push("step");
        spin(SLICE_MS / 4);
      }
    };
    // A short synchronous call (a host's write) that must not share its turn.
    const write = async () => {
      await ownTurn();
      log.push("write");
      spin(SLICE_MS / 4);
      endSlice();
      await pauseIfDue();
      log.push("after");
    };
    spin(SLICE_MS); // the slice is used up: the loop and the write both start by waiting
    const stop = turnRecorder(log);
    await Promise.all([loop(), write()]);
    stop();
    const at = log.indexOf("write");
    expect(log[at - 1]).toBe("turn");
    // Though the write used a quarter of a slice, endSlice made the next pause give a turn.
    expect(log[at + 1]).toBe("turn");
    expect(log.indexOf("after")).toBeGreaterThan(at + 1);
    expect(log.filter((e) => e === "step")).toHaveLength(12);
  });

  it("a short loop pays no turn", async () => {
    const log: string[] = [];
    spin(SLICE_MS);
    await pauseIfDue(); // the slice was used up: this turn starts a fresh one
    const stop = turnRecorder(log);
    const started = performance.now();
    await driveSteps(spinningSteps(log, "step", 3, 0));
    const elapsed = performance.now() - started;
    const turnsDuring = log.filter((e) => e === "turn").length;
    stop();
    // Only a thread held up for a whole slice (a loaded machine) may take a turn here.
    if (elapsed < SLICE_MS) expect(turnsDuring).toBe(0);
    expect(log.filter((e) => e === "step")).toHaveLength(3);
  });
});
