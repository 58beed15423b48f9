/**
 * How much this machine lets threads help, measured before the comparison: the same work run in
 * one thread, then once in each of N threads at the same time. Two kinds of work:
 *
 * - "parse": JSON.parse of the first lines of the fixture (what the scan and the chain tasks do:
 *   allocation- and memory-bound);
 * - "arithmetic": a loop that touches no memory (the best case).
 *
 * speedup = N × (one thread's time) / (wall time of the N threads together). A worker pool cannot
 * beat the "parse" figure on allocation-heavy work, whatever the code: it is the ceiling for the
 * workers=N / workers=0 ratio, and it is reported next to it.
 */

import fs from "node:fs";
import { Worker } from "node:worker_threads";

export interface ScalingProbe {
  threads: number;
  parseSpeedup: number;
  arithmeticSpeedup: number;
}

/** Bytes of the fixture each thread parses. */
const PARSE_BYTES = 8 * 1024 * 1024;
const SPIN_ITERATIONS = 150_000_000;

/**
 * The probe's thread body, run from source text (no separate file to build or locate): warm up,
 * say so, wait for the start signal (so start-up and copying the lines are not timed), work.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
${work.toString()}
work(workerData.kind, workerData.lines, workerData.spin);
const go = new Int32Array(workerData.go);
parentPort.postMessage("ready");
Atomics.wait(go, 0, 0);
parentPort.postMessage(work(workerData.kind, workerData.lines, workerData.spin));
`;

export async function probeScaling(fixture: string, threads: number): Promise<ScalingProbe> {
  const lines = fixtureLines(fixture);
  const speedup = async (kind: "parse" | "spin"): Promise<number> => {
    const go = new SharedArrayBuffer(4);
    const data = { kind, lines, spin: SPIN_ITERATIONS, go };
    work(kind, lines, SPIN_ITERATIONS); // warm-up: compile before timing
    let started = performance.now();
    work(kind, lines, SPIN_ITERATIONS);
    const one = performance.now() - started;
    const running = Array.from({ length: threads }, () => startThread(data));
    await Promise.all(running.map((thread) => thread.ready));
    started = performance.now();
    Atomics.store(new Int32Array(go), 0, 1);
    Atomics.notify(new Int32Array(go), 0);
    await Promise.all(running.map((thread) => thread.done));
    return (threads * one) / (performance.now() - started);
  };
  return { threads, parseSpeedup: await speedup("parse"), arithmeticSpeedup: await speedup("spin") };
}

function fixtureLines(fixture: string): string[] {
  const fd = fs.openSync(fixture, "r");
  try {
    const buffer = Buffer.alloc(PARSE_BYTES);
    const read = fs.readSync(fd, buffer, 0, PARSE_BYTES, 0);
    const text = buffer.subarray(0, read).toString("utf8");
    // Whole lines only: the last one is cut by the read.
    return text.split("\n").slice(0, -1);
  } finally {
    fs.closeSync(fd);
  }
}

/** A probe thread: `ready` once warmed up and waiting, `done` once its timed work is over. */
function startThread(data: { kind: string; lines: string[]; spin: number; go: SharedArrayBuffer }): { ready: Promise<void>; done: Promise<void> } {
  const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: data });
  const failed = new Promise<never>((_, reject) => worker.once("error", reject));
  const messages: Array<() => void> = [];
  worker.on("message", () => messages.shift()?.());
  const next = () => Promise.race([new Promise<void>((resolve) => messages.push(resolve)), failed]);
  const ready = next();
  const done = next().then(() => void worker.terminate());
  return { ready, done };
}

/** Self-contained (its source is sent to the probe threads): parse every line, or spin. */
function work(kind: string, lines: string[], spin: number): number {
  if (kind === "parse") {
    let keys = 0;
    for (const line of lines) keys += Object.keys(JSON.parse(line)).length;
    return keys;
  }
  let x = 0;
  for (let i = 0; i < spin; i++) x = (x + i * 7) % 1000003;
  return x;
}
