/**
 * How much this machine lets threads help, measured before the comparison: the same work run in
 * one thread alone, then once in each of N threads at the same time. Three kinds of work:
 *
 * - "parse": JSON.parse of the first lines of the fixture (what the scan and the chain tasks do:
 *   allocation- and memory-bound);
 * - "scan": the pool's own shard scan (workers/scan-shard.ts) of a share of the fixture, each
 *   thread its own share, as the pool's workers scan theirs: parsing plus lightening, with its
 *   garbage and its V8 background work;
 * - "arithmetic": a loop that touches no memory (the best case).
 *
 * speedup = N × (one thread's time) / (wall time of the N threads together). Every thread reads
 * and decodes the lines itself, as a pool worker reads its shard: lines handed over by structured
 * clone parse slower once two threads run (measured here: 1.05-1.6× for two threads with cloned
 * lines against 1.8-1.9× with lines each thread decoded), which once made this probe report that
 * parsing does not scale on this machine at all.
 */

import fs from "node:fs";
import { Worker } from "node:worker_threads";
import { shardBounds, type ByteRange } from "../../src/io/shard-bounds.js";

export interface ScalingProbe {
  threads: number;
  parseSpeedup: number;
  scanSpeedup: number;
  arithmeticSpeedup: number;
}

/** Bytes of the fixture each thread parses, or scans (its own share of the file). */
const PARSE_BYTES = 8 * 1024 * 1024;
/** The shard scan, as built next to this file (dist/bench/lib → dist/src/workers). */
const SCAN_MODULE = new URL("../../src/workers/scan-shard.js", import.meta.url).href;
/** The reader a thread reads its shards into, as a pool thread keeps one (workers/thread-scratch.ts). */
const RANGE_MODULE = new URL("../../src/io/read-range.js", import.meta.url).href;
const SPIN_ITERATIONS = 150_000_000;
/** Rounds of parsing or scanning, so that one thread works long enough for timer noise not to dominate. */
const PARSE_REPEAT = 5;

/**
 * The probe's thread body, run from source text (no separate file to build or locate): warm up,
 * say so, wait for the start signal (so start-up and copying the lines are not timed), work.
 */
const THREAD_SOURCE = `
const fs = require("node:fs");
const { parentPort, workerData } = require("node:worker_threads");
${fixtureLines.toString()}
${work.toString()}
(async () => {
  const lines = workerData.kind === "parse" ? fixtureLines(workerData.fixture, workerData.bytes) : [];
  const scan = workerData.kind === "scan" ? (await import(workerData.scanModule)).scanShardInto : undefined;
  const ranges = scan ? new (await import(workerData.rangeModule)).RangeReader() : undefined;
  const scanShare = async () => {
    for (let round = 0; round < workerData.repeat; round++) await scan({ kind: "scan-shard", file: workerData.fixture, ...workerData.share, maxLineBytes: 2 ** 30 }, () => undefined, ranges);
  };
  const once = () => (scan ? scanShare() : work(workerData.kind, lines, workerData.spin, workerData.repeat));
  await once();
  const go = new Int32Array(workerData.go);
  parentPort.postMessage("ready");
  Atomics.wait(go, 0, 0);
  const started = performance.now();
  await once();
  parentPort.postMessage(performance.now() - started);
})();
`;

export async function probeScaling(fixture: string, threads: number): Promise<ScalingProbe> {
  // The first `threads` shards of about PARSE_BYTES each (less in a short file), cut at line
  // starts as the pool cuts them.
  const size = fs.statSync(fixture).size;
  const shares = (await shardBounds(fixture, size, Math.min(PARSE_BYTES, Math.floor(size / threads)))).slice(0, threads);
  const speedup = async (kind: "parse" | "scan" | "spin"): Promise<number> => {
    const data = { kind, fixture, bytes: PARSE_BYTES, spin: SPIN_ITERATIONS, repeat: PARSE_REPEAT, scanModule: SCAN_MODULE, rangeModule: RANGE_MODULE };
    const one = await runTogether([shares[0]!], data);
    const together = await runTogether(shares, data);
    return (threads * one) / together;
  };
  return { threads, parseSpeedup: await speedup("parse"), scanSpeedup: await speedup("scan"), arithmeticSpeedup: await speedup("spin") };
}

/** Wall time of one thread per share doing the work at once, each warmed up first (start-up and reading the lines are not timed). */
async function runTogether(shares: readonly ByteRange[], data: Omit<ThreadData, "go" | "share">): Promise<number> {
  const go = new SharedArrayBuffer(4);
  const running = shares.map((share) => startThread({ ...data, share, go }));
  await Promise.all(running.map((thread) => thread.ready));
  const started = performance.now();
  Atomics.store(new Int32Array(go), 0, 1);
  Atomics.notify(new Int32Array(go), 0);
  await Promise.all(running.map((thread) => thread.done));
  return performance.now() - started;
}

interface ThreadData {
  kind: string;
  fixture: string;
  bytes: number;
  spin: number;
  repeat: number;
  /** The scan's module (kind "scan"), and this thread's share of the fixture to scan. */
  scanModule: string;
  rangeModule: string;
  share: ByteRange;
  go: SharedArrayBuffer;
}

/** Self-contained (its source is sent to the probe threads): the whole lines among the fixture's first bytes. */
function fixtureLines(fixture: string, bytes: number): string[] {
  const fd = fs.openSync(fixture, "r");
  try {
    const buffer = Buffer.alloc(bytes);
    const read = fs.readSync(fd, buffer, 0, bytes, 0);
    // Whole lines only: the last one is cut by the read.
    return buffer.subarray(0, read).toString("utf8").split("\n").slice(0, -1);
  } finally {
    fs.closeSync(fd);
  }
}

/** A probe thread: `ready` once warmed up and waiting, `done` once its timed work is over. */
function startThread(data: ThreadData): { ready: Promise<void>; done: Promise<void> } {
  const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: data });
  const failed = new Promise<never>((_, reject) => worker.once("error", reject));
  const messages: Array<() => void> = [];
  worker.on("message", () => messages.shift()?.());
  const next = () => Promise.race([new Promise<void>((resolve) => messages.push(resolve)), failed]);
  const ready = next();
  const done = next().then(() => void worker.terminate());
  return { ready, done };
}

/** Self-contained (its source is sent to the probe threads): parse every line `repeat` times, or spin. */
function work(kind: string, lines: string[], spin: number, repeat: number): number {
  // Real sessions hold glued lines: parsing one fails near its end, at about a whole parse's cost.
  const parsedKeys = (line: string): number => {
    try {
      return Object.keys(JSON.parse(line) as object).length;
    } catch {
      return 0;
    }
  };
  if (kind === "parse") {
    let keys = 0;
    for (let round = 0; round < repeat; round++) for (const line of lines) keys += parsedKeys(line);
    return keys;
  }
  let x = 0;
  for (let i = 0; i < spin; i++) x = (x + i * 7) % 1000003;
  return x;
}
