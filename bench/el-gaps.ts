/**
 * `node --max-semi-space-size=3 dist/bench/el-gaps.js SESSION [workers] [gaps.json]`
 * Compacts SESSION in this process (compact it on a copy: it is written to), with this process's
 * threads set up as the `chainpress` executable sets them (io/thread-priority.ts), while a 1 ms
 * timer records every event-loop stall over 15 ms and what it was made of: how long the main
 * thread ran and how long it waited for a core in it (Linux: /proc/self/task/<tid>/schedstat),
 * and the garbage collections that overlapped it. Prints the longest stalls and writes them to
 * gaps.json (default bench/out/el-gaps.json), on the clock `--cpu-prof` uses, so that with
 * `--cpu-prof --cpu-prof-dir=bench/out/prof` added, `node dist/bench/blocks.js <main profile> 8
 * --gaps gaps.json` names what ran in each.
 */

import fs from "node:fs";
import path from "node:path";
import { PerformanceObserver, performance } from "node:perf_hooks";
import { lowerOtherThreadsPriority } from "../src/io/thread-priority.js";
import { createChainRunner } from "../src/main/chain-runner.js";
import { compactSession } from "../src/main/compact-session.js";

export interface Gap {
  /** Start of the stall, in microseconds of CLOCK_MONOTONIC (a CPU profile's clock). */
  startUs: number;
  ms: number;
  /** The main thread's running time within the stall (undefined off Linux). */
  runMs?: number;
  /** The main thread's time waiting for a core within the stall. */
  waitMs?: number;
  /** Garbage collections overlapping the stall: kind and milliseconds. */
  gc: string[];
}

const STALL_MS = 15;
const GC_KINDS: Record<number, string> = { 1: "scavenge", 2: "mark-compact", 4: "incremental", 8: "weak callbacks" };

/** Running and waiting nanoseconds of this (the main) thread so far, or undefined off Linux. */
function schedReader(): () => [number, number] | undefined {
  const file = `/proc/self/task/${process.pid}/schedstat`;
  if (!fs.existsSync(file)) return () => undefined;
  const fd = fs.openSync(file, "r");
  const buffer = Buffer.alloc(128);
  return () => {
    const fields = buffer.toString("latin1", 0, fs.readSync(fd, buffer, 0, buffer.length, 0)).split(" ");
    return [Number(fields[0]), Number(fields[1])];
  };
}

async function main(file: string, workers: number, out: string): Promise<void> {
  lowerOtherThreadsPriority();
  const runner = createChainRunner(workers);
  const collections: Array<{ start: number; ms: number; kind: string }> = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) collections.push({ start: entry.startTime, ms: entry.duration, kind: GC_KINDS[(entry as { detail?: { kind?: number } }).detail?.kind ?? 0] ?? "other" });
  });
  observer.observe({ entryTypes: ["gc"] });
  const sched = schedReader();
  const stalls: Array<{ start: number; hr: bigint; ms: number; run?: number; wait?: number }> = [];
  let last = performance.now();
  let lastHr = process.hrtime.bigint();
  let lastSched = sched();
  const timer = setInterval(() => {
    const now = performance.now();
    const nowSched = sched();
    if (now - last > STALL_MS) {
      const stall: (typeof stalls)[number] = { start: last, hr: lastHr, ms: now - last };
      if (nowSched && lastSched) [stall.run, stall.wait] = [(nowSched[0] - lastSched[0]) / 1e6, (nowSched[1] - lastSched[1]) / 1e6];
      stalls.push(stall);
    }
    last = now;
    lastHr = process.hrtime.bigint();
    lastSched = nowSched;
  }, 1);
  try {
    const report = await compactSession({ file, runner });
    console.log(`event-loop max (report): ${report.eventLoopMaxMs.toFixed(1)} ms; ${stalls.length} stall(s) over ${STALL_MS} ms`);
  } finally {
    clearInterval(timer);
    await runner.close();
  }
  await new Promise((resolve) => setTimeout(resolve, 10)); // the last GC entries
  observer.disconnect();
  const gaps: Gap[] = stalls
    .sort((a, b) => b.ms - a.ms)
    .map((stall) => ({
      startUs: Number(stall.hr / 1000n),
      ms: stall.ms,
      ...(stall.run === undefined ? {} : { runMs: stall.run, waitMs: stall.wait! }),
      gc: collections.filter((gc) => gc.start + gc.ms > stall.start && gc.start < stall.start + stall.ms).map((gc) => `${gc.kind} ${gc.ms.toFixed(1)}`),
    }));
  for (const gap of gaps.slice(0, 10)) {
    const sched = gap.runMs === undefined ? "" : ` ran ${gap.runMs.toFixed(1)}, waited for a core ${gap.waitMs!.toFixed(1)};`;
    console.log(`  ${gap.ms.toFixed(1)} ms:${sched} GC [${gap.gc.join(", ")}]`);
  }
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(gaps));
  console.log(`wrote ${out}`);
}

const [file, workers = "2", out = path.join("bench", "out", "el-gaps.json")] = process.argv.slice(2);
if (!file) throw new Error("usage: el-gaps.js SESSION [workers] [gaps.json]");
await main(file, Number(workers), out);
