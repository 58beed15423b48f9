/**
 * End-to-end compaction cases driven by tinybench: every iteration is one fresh child process
 * compacting a fresh copy of the fixture, and tinybench records the child's compactSession wall
 * time (overriddenDuration), so process start-up is not part of the sample.
 */

import { Bench, type Task } from "tinybench";
import type { CaseResult } from "./case-types.js";
import { runCase, type QuietGate } from "./run-case.js";
import { max, median, medianByKey } from "./stats.js";

export interface E2eFixture {
  /** Preset name, for the table. */
  name: string;
  file: string;
  /** Tool-result characters in the session (the generator's count). */
  resultChars: number;
  /** Warm-up compactions per child before the measured one (0: a cold process, like the CLI). */
  warmups?: number;
}

export interface E2eOptions {
  workerCounts: readonly number[];
  iterationsFor: (fixture: E2eFixture) => number;
  /** Time the load phases separately in each child (see case-child.ts). */
  measureLoad: boolean;
  gate?: QuietGate;
}

export interface E2eSummary {
  fixture: string;
  workers: number;
  iterations: number;
  fileMb: number;
  resultMchars: number;
  /** Median compactSession wall time. */
  wallMs: number;
  /** tinybench's relative margin of error of the mean, in %. */
  rmePct: number;
  mcharsPerS: number;
  msPerMchars: number;
  /** Median process CPU time (all threads) per M chars: the load-robust cost measure. */
  cpuMsPerMchars: number;
  /** Median compaction CPU time / CPU time of JSON.parse of the same file (both barely move under load). */
  cpuOverParse: number;
  /** Median I/O floor (read + append + spill, fsynced) measured in the same children. */
  floorMs: number;
  wallOverFloor: number;
  eventLoopMaxMs: number;
  eventLoopP99Ms: number;
  /** Median main-thread event-loop utilisation during compaction. */
  mainThreadBusy: number;
  peakRssMb: number;
  /** Issue 10's memory budget: 0.5 × file size + 250 MB (MB = 10^6 bytes, as fileMb and peakRssMb). */
  rssBudgetMb: number;
  stageMs: Record<string, number>;
  gc: Record<string, number>;
  floor: Record<string, number>;
  load?: Record<string, number>;
  /** Highest share of CPU busy with other work before a case (noisy numbers above ~0.2). */
  cpuBusyMax: number;
  samples: CaseResult[];
}

export async function runE2e(fixtures: readonly E2eFixture[], options: E2eOptions): Promise<E2eSummary[]> {
  const summaries: E2eSummary[] = [];
  for (const fixture of fixtures) {
    const samples = new Map<number, CaseResult[]>(options.workerCounts.map((w) => [w, []]));
    const bench = new Bench({ name: fixture.name, iterations: options.iterationsFor(fixture), time: 0, warmup: false, throws: true });
    for (const workers of options.workerCounts) {
      bench.add(`${fixture.name} w=${workers}`, async () => {
        const request = { fixture: fixture.file, workers, measureLoad: options.measureLoad, warmups: fixture.warmups ?? 0 };
        const result = await runCase(request, options.gate);
        samples.get(workers)!.push(result);
        return { overriddenDuration: result.wallMs };
      });
    }
    const tasks = await bench.run();
    options.workerCounts.forEach((workers, i) => summaries.push(summarize(fixture, workers, samples.get(workers)!, tasks[i]!.result)));
  }
  return summaries;
}

type Numbers = Record<string, number>;

function summarize(fixture: E2eFixture, workers: number, samples: CaseResult[], result: Task["result"]): E2eSummary {
  const wallMs = median(samples.map((s) => s.wallMs));
  const floorMs = median(samples.map((s) => s.floor.totalMs));
  const fileMb = samples[0]!.fileBytes / 1e6;
  const mchars = fixture.resultChars / 1e6;
  const loads = samples.flatMap((s) => (s.load ? [s.load as unknown as Numbers] : []));
  return {
    fixture: fixture.name,
    workers,
    iterations: samples.length,
    fileMb,
    resultMchars: mchars,
    wallMs,
    rmePct: "latency" in result ? result.latency.rme : Number.NaN,
    mcharsPerS: mchars / (wallMs / 1000),
    msPerMchars: wallMs / mchars,
    cpuMsPerMchars: median(samples.map((s) => s.cpuMs)) / mchars,
    cpuOverParse: median(samples.map((s) => s.cpuMs / s.parseCpuMs)),
    floorMs,
    wallOverFloor: wallMs / floorMs,
    eventLoopMaxMs: max(samples.map((s) => s.eventLoop.maxMs)),
    eventLoopP99Ms: median(samples.map((s) => s.eventLoop.p99Ms)),
    mainThreadBusy: median(samples.map((s) => s.mainThreadBusy)),
    peakRssMb: max(samples.map((s) => s.peakRssMb)),
    rssBudgetMb: 0.5 * fileMb + 250,
    stageMs: medianByKey(samples.map((s) => s.stageMs)),
    gc: medianByKey(samples.map((s) => s.gc as unknown as Numbers)),
    floor: medianByKey(samples.map((s) => s.floor as unknown as Numbers)),
    ...(loads.length > 0 ? { load: medianByKey(loads) } : {}),
    cpuBusyMax: max(samples.map((s) => s.cpuBusyBefore ?? Number.NaN)),
    samples,
  };
}
