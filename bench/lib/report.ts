/**
 * Turns benchmark results into the printed tables and the verdict on issue 10's targets (which
 * replace issue 6's where both set one).
 * Pure: no I/O.
 */

import type { E2eSummary } from "./e2e.js";
import type { StageResult } from "./stages.js";
import { markdownTable } from "./table.js";

/** Main-thread stages of CompactReport.stageMs, then the worker ones (summed over threads). */
const MAIN_STAGES = ["plan", "encode", "append"];

export function stageTable(stages: readonly StageResult[]): string {
  const rows = stages.map((s) => [s.stage, s.where, s.meanMs, s.p99Ms, `±${s.rmePct.toFixed(1)}%`, s.chars / 1e6, s.msPerMchars]);
  return markdownTable(["stage (one ~1M-char chain)", "runs on", "mean ms", "p99 ms", "rme", "M chars", "ms / M chars"], rows, 2);
}

export function e2eTable(rows: readonly E2eSummary[]): string {
  const body = rows.map((r) => [
    r.fixture, workersLabel(r.workers), String(r.iterations), r.fileMb, r.wallMs, r.mcharsPerS, r.msPerMchars, r.cpuMsPerMchars, r.cpuOverParse, r.floorMs, r.wallOverFloor,
    r.eventLoopMaxMs, r.eventLoopP99Ms, r.mainThreadBusy, r.peakRssMb, r.peakRssMb / r.rssBudgetMb, r.cpuBusyMax,
  ]);
  const headers = ["fixture", "workers", "n", "file MB", "wall ms", "M chars/s", "ms / M chars", "CPU ms / M chars", "CPU / parse CPU", "I/O floor ms", "wall / floor", "EL max ms", "EL p99 ms", "main busy", "peak RSS MB", "RSS / budget", "CPU busy before"];
  return markdownTable(headers, body, 2);
}

/** Where compactSession's wall time went (stageMs medians plus the separately timed load phases). */
export function breakdownTable(rows: readonly E2eSummary[]): string {
  const stageNames = [...new Set(rows.flatMap((r) => Object.keys(r.stageMs)))];
  const headers = ["fixture", "workers", "wall", "load*", "detect*", "context x1*", ...stageNames.map((s) => (MAIN_STAGES.includes(s) ? `${s} (main)` : `${s} (wkr)`)), "GC major", "GC minor", "floor read", "floor append", "floor spill"];
  const body = rows.map((r) => [
    r.fixture, workersLabel(r.workers), r.wallMs, r.load?.loadMs ?? Number.NaN, r.load?.detectMs ?? Number.NaN, r.load?.contextMs ?? Number.NaN,
    ...stageNames.map((s) => r.stageMs[s] ?? 0), r.gc.majorMs ?? 0, r.gc.minorMs ?? 0, r.floor.readMs ?? 0, r.floor.appendMs ?? 0, r.floor.spillMs ?? 0,
  ]);
  return markdownTable(headers, body, 0);
}

/**
 * Main-thread work no worker can take over, at least: load, detection, one context measure
 * (compactSession runs two), plan, encode and append. wall(workers=0) / this bounds the speedup
 * any number of workers can give (Amdahl).
 */
export function mainSerialMs(r: E2eSummary): number {
  const load = r.load ?? {};
  return (load.loadMs ?? 0) + (load.detectMs ?? 0) + (load.contextMs ?? 0) + MAIN_STAGES.reduce((n, s) => n + (r.stageMs[s] ?? 0), 0);
}

export function workersLabel(workers: number): string {
  return workers === 0 ? "0 (inline)" : String(workers);
}

export interface TargetVerdict {
  target: string;
  measured: string;
  met: boolean | null;
}

/** Issue 10's targets, judged on the cases that were run (null: not measurable in this run, or reported only). */
export function judgeTargets(rows: readonly E2eSummary[], cores: number): TargetVerdict[] {
  const find = (fixture: string, workers: number) => rows.find((r) => r.fixture === fixture && r.workers === workers);
  const w0 = find("20x1M", 0);
  const w2 = find("20x1M", 2);
  const verdicts: TargetVerdict[] = [];
  if (w0 && w2) {
    const bound = w0.load ? ` (bound with all worker stages free: ${(w0.wallMs / mainSerialMs(w0)).toFixed(2)}x)` : "";
    verdicts.push({ target: "20x1M: workers=2 >= 1.6x faster than workers=0", measured: `${(w0.wallMs / w2.wallMs).toFixed(2)}x${bound}`, met: w0.wallMs / w2.wallMs >= 1.6 });
  }
  // Inline (workers=0) compaction runs on the main thread by design; the CLI's default is cores - 1 >= 1.
  const threaded = rows.filter((r) => r.workers >= 1);
  if (threaded.length > 0) {
    const worst = threaded.reduce((a, r) => (r.eventLoopMaxMs > a.eventLoopMaxMs ? r : a));
    verdicts.push({ target: "event-loop max delay <= 20 ms at every size (workers >= 1)", measured: `${worst.eventLoopMaxMs.toFixed(0)} ms at worst (${worst.fixture}, workers=${worst.workers})`, met: worst.eventLoopMaxMs <= 20 });
  }
  if (rows.length > 0) {
    const worst = rows.reduce((a, r) => (r.cpuOverParse > a.cpuOverParse ? r : a));
    verdicts.push({ target: "CPU / one JSON.parse of the file <= 4 (all cases)", measured: `${worst.cpuOverParse.toFixed(1)} at worst (${worst.fixture}, workers=${worst.workers})`, met: worst.cpuOverParse <= 4 });
  }
  verdicts.push(flatness(rows, 0), flatness(rows, Math.min(2, cores)));
  const worstRss = rows.reduce((a, r) => Math.max(a, r.peakRssMb / r.rssBudgetMb), 0);
  verdicts.push({ target: "peak RSS <= 0.5 x file + 250 MB (all cases)", measured: `${(worstRss * 100).toFixed(0)}% of budget at worst`, met: worstRss <= 1 });
  // Issue 6 asked for <= 1.5x; issue 10 keeps the ratio reported only (fsync time varies 2x here).
  if (w2) verdicts.push({ target: "20x1M: wall / I/O floor (workers=2; reported, no target)", measured: `${w2.wallOverFloor.toFixed(1)}x`, met: null });
  return verdicts;
}

/** Issue 10 judges flatness from 20 MB (20x1M) up; smaller sessions are dominated by start-up. */
const FLAT_FROM_MB = 20;

/**
 * Cost per M chars at one worker count across sizes, relative to 20x1M (wall; CPU in brackets).
 * Every size is shown; only sessions of 20 MB and more are judged.
 */
function flatness(rows: readonly E2eSummary[], workers: number): TargetVerdict {
  const same = rows.filter((r) => r.workers === workers);
  const ref = same.find((r) => r.fixture === "20x1M") ?? same.find((r) => r.fileMb >= FLAT_FROM_MB);
  const target = `cost per M chars flat +-20% from 20 MB to 400 MB (workers=${workers}, vs ${ref?.fixture ?? "-"}; CPU in brackets; smaller sessions shown, not judged)`;
  const judged = same.filter((r) => r.fileMb >= FLAT_FROM_MB);
  if (!ref || judged.length < 2) return { target, measured: "needs two sessions of 20 MB or more (--full)", met: null };
  const parts = same.map((r) => `${r.fixture} ${(r.msPerMchars / ref.msPerMchars).toFixed(2)} (${(r.cpuMsPerMchars / ref.cpuMsPerMchars).toFixed(2)})`);
  const ok = judged.every((r) => Math.abs(r.msPerMchars / ref.msPerMchars - 1) <= 0.2);
  return { target, measured: parts.join(", "), met: ok };
}

export function verdictTable(verdicts: readonly TargetVerdict[]): string {
  return markdownTable(["target", "measured", "met"], verdicts.map((v) => [v.target, v.measured, v.met === null ? "n/a" : v.met ? "yes" : "NO"]));
}
