/**
 * Turns bench:compare's samples into medians, same-run ratios and the verdict on issue 10's
 * targets. Pure: no I/O.
 */

import type { PhaseMs } from "../../src/main/compact-report.js";
import type { Sample } from "./contenders.js";
import type { FixtureRuns } from "./compare-rounds.js";
import { median } from "./stats.js";
import { markdownTable } from "./table.js";

/** Issue 10's memory budget: 0.5 × file size + 250 MB (MB = 10^6 bytes). */
export function rssBudgetBytes(fileBytes: number): number {
  return 0.5 * fileBytes + 250e6;
}

export interface ContenderSummary {
  contender: string;
  ok: number;
  runs: number;
  wallMs: number;
  cpuMs: number;
  peakRssBytes: number;
  /** The main thread's own CPU: with unlimited cores, the least a run's wall time can be. */
  mainThreadCpuMs: number;
  cpuOverParse: number;
  rssOverBudget: number;
  wallOverFloor: number;
  /** chainpress only (NaN for upstream): from the --json report. */
  eventLoopMaxMs: number;
  reportPeakRssBytes: number;
  compressed: number;
  /**
   * chainpress only (NaN for upstream), medians: the process's time outside the compaction (before
   * it starts, and the output and exit after it ends), and the compaction's phases (CompactReport.phaseMs).
   */
  startMs: number;
  phaseMs: PhaseMs;
}

export interface FixtureSummary {
  fixture: string;
  fileBytes: number;
  parseCpuMs: number;
  /** The least a run of this session can take: node's start, reading the file, one JSON.parse of it, and chainpress's fsync'd writes. */
  floorMs: number;
  contenders: ContenderSummary[];
  /** Median over rounds of the ratio within each round (both runs ok), NaN when none. */
  upstreamOverParallel: number;
  upstreamOverSerial: number;
  serialOverParallel: number;
  /** The same ratio, workers=0 over each chainpress run (keyed by its label). */
  serialOverPool: Record<string, number>;
  /** The chainpress worker count the ratios are taken on (2 when it was run). */
  parallelLabel: string;
}

export function summarizeFixture(fixture: string, runs: FixtureRuns): FixtureSummary {
  const parseCpuMs = median(runs.yardsticks.map((y) => y.parseCpuMs));
  const floorMs = median(runs.yardsticks.flatMap((y) => (y.floor ? [y.nodeStartMs + y.floor.readMs + y.parseCpuMs + y.floor.appendMs + y.floor.spillMs] : [])));
  const fileBytes = runs.samples[0]?.fileBytes ?? Number.NaN;
  const contenders = runs.contenders.map((c) => summarizeContender(c.label, runs.samples, parseCpuMs, floorMs));
  const parallelLabel = parallelOf(runs.contenders.flatMap((c) => (c.kind === "chainpress" ? [c.workers!] : [])));
  return {
    fixture,
    fileBytes,
    parseCpuMs,
    floorMs,
    contenders,
    upstreamOverParallel: pairedRatio(runs.samples, "upstream", parallelLabel),
    upstreamOverSerial: pairedRatio(runs.samples, "upstream", "workers=0"),
    serialOverParallel: pairedRatio(runs.samples, "workers=0", parallelLabel),
    serialOverPool: Object.fromEntries(contenders.filter((c) => c.contender.startsWith("workers=")).map((c) => [c.contender, pairedRatio(runs.samples, "workers=0", c.contender)])),
    parallelLabel,
  };
}

function parallelOf(workerCounts: readonly number[]): string {
  const parallel = workerCounts.includes(2) ? 2 : Math.max(...workerCounts);
  return `workers=${parallel}`;
}

function summarizeContender(label: string, all: readonly Sample[], parseCpuMs: number, floorMs: number): ContenderSummary {
  const runs = all.filter((s) => s.contender === label);
  const ok = runs.filter((s) => s.ok);
  const pick = (value: (s: Sample) => number | undefined) => median(ok.map((s) => value(s) ?? Number.NaN));
  const wallMs = pick((s) => s.wallMs);
  const cpuMs = pick((s) => s.cpuMs);
  const peakRssBytes = pick((s) => s.peakRssBytes);
  return {
    contender: label,
    ok: ok.length,
    runs: runs.length,
    wallMs,
    cpuMs,
    peakRssBytes,
    mainThreadCpuMs: pick((s) => s.mainThreadCpuMs),
    cpuOverParse: cpuMs / parseCpuMs,
    rssOverBudget: peakRssBytes / rssBudgetBytes(runs[0]?.fileBytes ?? Number.NaN),
    wallOverFloor: wallMs / floorMs,
    eventLoopMaxMs: pick((s) => s.eventLoopMaxMs),
    reportPeakRssBytes: pick((s) => s.reportPeakRssBytes),
    compressed: pick((s) => s.compressed),
    startMs: pick((s) => (s.reportWallMs === undefined ? undefined : s.wallMs - s.reportWallMs)),
    phaseMs: {
      scan: pick((s) => s.phaseMs?.scan),
      untilFirstChain: pick((s) => s.phaseMs?.untilFirstChain),
      chains: pick((s) => s.phaseMs?.chains),
      afterChains: pick((s) => s.phaseMs?.afterChains),
    },
  };
}

/** Runs of one round share the machine's state: their ratio is steadier than a ratio of medians. */
function pairedRatio(samples: readonly Sample[], numerator: string, denominator: string): number {
  const rounds = new Set(samples.map((s) => s.round));
  const ratios = [...rounds].flatMap((round) => {
    const a = samples.find((s) => s.round === round && s.contender === numerator && s.ok);
    const b = samples.find((s) => s.round === round && s.contender === denominator && s.ok);
    return a && b ? [a.wallMs / b.wallMs] : [];
  });
  return median(ratios);
}

export function contenderTable(summaries: readonly FixtureSummary[]): string {
  const rows = summaries.flatMap((f) =>
    f.contenders.map((c) => [
      f.fixture, c.contender, `${c.ok}/${c.runs}`, f.fileBytes / 1e6, Number.isNaN(c.compressed) ? "-" : String(c.compressed), c.wallMs, c.cpuMs, c.mainThreadCpuMs, c.cpuOverParse, c.peakRssBytes / 1e6, c.rssOverBudget,
      c.eventLoopMaxMs, c.reportPeakRssBytes / 1e6, c.wallOverFloor,
    ]),
  );
  const headers = ["fixture", "run", "ok", "file MB", "chains", "wall ms", "CPU ms", "main-thread CPU ms", "CPU / parse CPU", "peak RSS MB", "RSS / budget", "EL max ms (report)", "RSS MB (report)", "wall / floor"];
  return markdownTable(headers, rows, 2);
}

/**
 * Where chainpress's wall time goes, phase by phase (medians). The start and exit (node, modules,
 * the pool's threads; the output, the heaps torn down), the stretch until the first chain task and the one after the last are the main thread's
 * alone: more workers shorten the scan and the chain tasks only. Their share of the wall is what a
 * bigger pool cannot take off.
 */
export function phaseTable(summaries: readonly FixtureSummary[]): string {
  const rows = summaries.flatMap((f) =>
    f.contenders
      .filter((c) => !Number.isNaN(c.startMs))
      .map((c) => {
        const { scan, untilFirstChain, chains, afterChains } = c.phaseMs;
        return [f.fixture, c.contender, c.wallMs, c.startMs, scan, untilFirstChain, chains, afterChains, (c.startMs + untilFirstChain + afterChains) / c.wallMs];
      }),
  );
  const headers = ["fixture", "run", "wall ms", "start + exit ms", "scan ms", "until first chain ms", "chains ms", "after chains ms", "start + exit + until first + after / wall"];
  return markdownTable(headers, rows, 2);
}

export interface TargetRow {
  fixture: string;
  target: string;
  /** A number, or why there is none (e.g. "skipped (peer not found)"). */
  measured: number | string;
  /** null: reported only, or not measurable in this run. */
  met: boolean | null;
}

/** Issue 10's targets on one fixture, from the medians and paired ratios of this run. */
export function judgeFixture(f: FixtureSummary, peerFound: boolean): TargetRow[] {
  const p = f.parallelLabel;
  const ours = f.contenders.filter((c) => c.contender.startsWith("workers="));
  const parallel = f.contenders.find((c) => c.contender === p);
  const rows: TargetRow[] = [
    peerFound
      ? atLeast(f.fixture, `upstream wall / ${p} wall >= 3.0`, f.upstreamOverParallel, 3)
      : { fixture: f.fixture, target: `upstream wall / ${p} wall >= 3.0`, measured: "skipped (peer not found)", met: null },
    atLeast(f.fixture, `workers=0 wall / ${p} wall >= 1.6`, f.serialOverParallel, 1.6),
    ...ours.map((c) => atMost(f.fixture, `${c.contender} CPU / one JSON.parse CPU <= 4`, c.cpuOverParse, 4)),
    ...ours.map((c) => atMost(f.fixture, `${c.contender} peak RSS / (0.5 x file + 250 MB) <= 1`, c.rssOverBudget, 1)),
    ...ours.filter((c) => c.contender !== "workers=0").map((c) => atMost(f.fixture, `${c.contender} event-loop max ms <= 20`, c.eventLoopMaxMs, 20)),
  ];
  if (peerFound && p !== "workers=0") rows.push({ fixture: f.fixture, target: "upstream wall / workers=0 wall (reported)", measured: f.upstreamOverSerial, met: null });
  rows.push(...manyCoreRows(f));
  if (parallel) rows.push({ fixture: f.fixture, target: `${p} wall / floor (reported, no target)`, measured: parallel.wallOverFloor, met: null });
  // Whatever the number of cores, a run takes at least its main thread's own CPU time: the most
  // the pool can gain over workers=0 on any machine (reported, no target).
  const serial = f.contenders.find((c) => c.contender === "workers=0");
  if (serial && parallel && p !== "workers=0") {
    rows.push({ fixture: f.fixture, target: `workers=0 wall / ${p} main-thread CPU (bound on unlimited cores, reported)`, measured: serial.wallMs / parallel.mainThreadCpuMs, met: null });
  }
  return rows;
}

/** Issue 10's many-core target: on the 16-core machine, 15 workers at least 6× faster than none. */
const MANY_CORE_WORKERS = 15;
const MANY_CORE_SPEEDUP = 6;

/**
 * Each pool larger than two against workers=0, as paired ratios (bench/device-curve.sh runs the
 * curve on a lent machine): judged for MANY_CORE_WORKERS or more, reported for the others.
 */
function manyCoreRows(f: FixtureSummary): TargetRow[] {
  return f.contenders.flatMap((c) => {
    const workers = workersOf(c.contender);
    if (workers === undefined || workers <= 2) return [];
    const ratio = f.serialOverPool[c.contender] ?? Number.NaN;
    if (workers >= MANY_CORE_WORKERS) return [atLeast(f.fixture, `workers=0 wall / ${c.contender} wall >= ${MANY_CORE_SPEEDUP}`, ratio, MANY_CORE_SPEEDUP)];
    return [{ fixture: f.fixture, target: `workers=0 wall / ${c.contender} wall (reported)`, measured: ratio, met: null }];
  });
}

function workersOf(label: string): number | undefined {
  const match = /^workers=(\d+)$/.exec(label);
  return match ? Number(match[1]) : undefined;
}

function atLeast(fixture: string, target: string, measured: number, bound: number): TargetRow {
  return { fixture, target, measured, met: Number.isNaN(measured) ? null : measured >= bound };
}

function atMost(fixture: string, target: string, measured: number, bound: number): TargetRow {
  return { fixture, target, measured, met: Number.isNaN(measured) ? null : measured <= bound };
}

export function targetTable(rows: readonly TargetRow[]): string {
  return markdownTable(["fixture", "target", "measured", "met"], rows.map((r) => [r.fixture, r.target, r.measured, r.met === null ? "-" : r.met ? "yes" : "NO"]), 2);
}
